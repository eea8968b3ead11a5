// Package depcheck holds the test that keeps the dependency direction of
// the repository true: sdk never imports host or plugins; host reaches
// plugins only through host/builtin; plugins import only sdk.
package depcheck
