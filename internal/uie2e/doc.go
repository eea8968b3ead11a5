// Package uie2e tests `acptap ui` end to end in a real headless Chromium
// (Debian's chromium, driven with chromedp): a store recorded through the
// official SDK peers, served by a real `acptap ui` process; assertions on
// the DOM, a screenshot of each page kept as an artifact.
package uie2e
