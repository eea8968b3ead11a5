// Package depcheck holds the test that keeps the dependency direction of
// the repository true: sdk never imports host, plugins or examples; host
// reaches plugins only through host/builtin; plugins import only sdk, their
// own packages, plugins/internal (the engines the built-in plugins share)
// and the module-root internal libraries sdk and plugins share; nothing
// outside plugins/ imports plugins/internal.
package depcheck
