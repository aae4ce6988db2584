package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// writeTable writes rows as aligned columns two spaces apart; align holds
// one letter per column, 'l' or 'r'. The first row is the header.
func writeTable(w io.Writer, rows [][]string, align string) {
	width := make([]int, len(align))
	for _, row := range rows {
		for i, cell := range row {
			width[i] = max(width[i], utf8.RuneCountInString(cell))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		for i, cell := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(cell))
			if i > 0 {
				b.WriteString("  ")
			}
			if align[i] == 'r' {
				b.WriteString(pad + cell)
			} else {
				b.WriteString(cell + pad)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// commas formats n with thousands separators: 98765 is "98,765".
func commas(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + commas(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// hours formats d in hours to one decimal: "25.3h", "24h".
func hours(d time.Duration) string {
	return strings.TrimSuffix(fmt.Sprintf("%.1f", d.Hours()), ".0") + "h"
}

// age formats d as hours and minutes: "26h40m".
func age(d time.Duration) string {
	m := int(d / time.Minute)
	return fmt.Sprintf("%dh%02dm", m/60, m%60)
}

// clockTime formats the time of day of t, "24:00" at a day's end.
func clockTime(t time.Time, dayEnd bool) string {
	if dayEnd {
		return "24:00"
	}
	return t.Format("15:04")
}

// clip shortens s to at most n runes, marking a cut with "...".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-3]) + "..."
}
