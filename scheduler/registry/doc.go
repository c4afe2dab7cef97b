// Package registry lists yardmaster's built-in plugins as
// framework.Registrations (NewInTree), kube-scheduler's default plugin list
// (DefaultPlugins) and the default profile built from it.
package registry
