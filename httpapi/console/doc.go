// Package console serves Neuro's web console: a single page, written as
// plain ES modules and embedded in the binary, that talks to the REST API
// of package httpapi from the browser.
//
// # Overview
//
// A [Handler] serves the page at its root ("/") and its assets under
// "/assets/". It is an [http.Handler]; mount it on any mux, under a
// prefix with [http.StripPrefix] (mount "/console/", not "/console"), or
// beside the API with [Handler.Beside], which is what examples/server
// does:
//
//	api, _ := httpapi.New(rt, opts)
//	ui, _ := console.New(nil)
//	http.ListenAndServe(addr, ui.Beside(api))
//
// The page asks for an API key, keeps it in the tab's sessionStorage
// only and sends it as a Bearer token. Its pages: chat (streamed answers
// with the "neuro":{"activity":true} extension drawn as a raster of
// spikes per layer and token), networks (compile, deploy, run; the
// built-in digits classifier with a drawing pad), deployments and
// telemetry (charts drawn with the vendored uPlot).
//
// A chat is a conversation of the Responses API (POST /v1/responses):
// each turn sends only its new message, with the previous_response_id of
// the answer before, and shows how many of the turn's input tokens the
// server resumed from its stored state. Where there is no state to
// continue (another model picked, an answer stopped, a stored response
// expired or deleted) the turn sends the conversation shown, whole; New
// chat starts from nothing.
//
// # Invariants
//
//   - Nothing is fetched from outside the server: every asset is in the
//     binary, and the page's Content-Security-Policy allows scripts,
//     styles and images from its own origin only, and connections to its
//     own origin and Options.APIBase.
//   - No build step: the files under static/ are what the browser runs.
//     The one library, uPlot, is its published minified file with its
//     licence beside it (static/assets/vendor/uplot).
//   - The stable data-testid hooks of API.md ("The console") are on the
//     elements they name; the browser suite in consoletest drives them.
//   - Assets are served with an ETag and Cache-Control: no-cache (a new
//     binary is never hidden behind a stale cache), gzip-compressed when
//     the client accepts it.
package console
