// Package consoletest holds the browser suite of the web console
// (package httpapi/console): Debian's Chromium, driven by chromedp, runs
// every page against a real server with the built-in models.
//
// The suite skips when there is no Chromium at /usr/bin/chromium (or at
// $NEURO_CHROMIUM); CI installs Debian's chromium package so that it
// runs there. Screenshots go to $NEURO_CONSOLE_ARTIFACTS when it is set,
// else to the test's temporary directory; the page-weight and
// load-to-chat figures of bench/RESULTS.md are written there too
// (console-figures.json).
//
//	apt-get install -y chromium
//	NEURO_CONSOLE_ARTIFACTS=/tmp/console go test ./httpapi/console/consoletest -v
package consoletest
