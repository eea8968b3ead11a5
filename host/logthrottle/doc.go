// Package logthrottle bounds how often one message is written to the
// host's JSON log (acptap.log): a hostile or broken peer can make the same
// diagnostic fire once per frame, millions of times. Repeats beyond a
// burst are counted, not written, and the count is written when the
// message's window ends or the log closes.
package logthrottle
