package priority

// Background is the nice value background processes run at, at least.
const Background = 10

// Target is the nice value of a background process started by a process
// at nice own: Background, and always below own (up to the maximum, 19).
func Target(own int) int {
	t := max(own+1, Background)
	return min(t, 19)
}
