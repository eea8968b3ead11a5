// Package private makes the directories and files acptap writes private to
// the user: directories 0700, files 0600, whatever the umask (DESIGN.md: no
// secret reaches disk readable by others). It is the one place these modes
// and the way to apply them are written; the store, the wire log, the AEP
// receiver, ship, the OTLP spool, the finisher and the log file use it.
package private
