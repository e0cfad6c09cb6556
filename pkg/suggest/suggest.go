// Package suggest finds the known name a mistyped one was meant to be, for
// the "did you mean" of an error message.
package suggest

import "strings"

// MaxDistance is the most edits (insertions, deletions, substitutions,
// ignoring case) by which a suggested name differs from the given one.
const MaxDistance = 2

// maxLen bounds the length of a name that gets a suggestion: names come
// from users, and a comparison costs the product of the two lengths.
const maxLen = 64

// Closest returns the candidate within MaxDistance edits of key, ignoring
// case, the first of equally near ones; "" when there is none.
func Closest(key string, candidates []string) string {
	best, bestDist := "", MaxDistance+1
	if len(key) > maxLen {
		return ""
	}
	for _, c := range candidates {
		if d := distance(strings.ToLower(key), strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
