package main

func cmdImportBook(e *env, args []string) error { return nil }
