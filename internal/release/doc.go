// Package release holds acptap's version: `acptap version`, each built-in
// plugin's version (producer.version, producer.plugin.version) and the
// replay agent's info all say this one string. It is no part of the plugin
// SDK: a vendor plugin has a version of its own.
package release
