package console_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/neuro-go/neuro/httpapi/console"
)

// The console beside an API on one server, as examples/server does: the
// page and its assets go to the console, everything else to the API.
func ExampleHandler_Beside() {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "api") })
	ui, err := console.New(nil)
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(ui.Beside(api))
	defer srv.Close()
	for _, p := range []string{"/", "/v1/models"} {
		res, err := http.Get(srv.URL + p)
		if err != nil {
			panic(err)
		}
		res.Body.Close()
		fmt.Println(p, res.Header.Get("Content-Type"))
	}
	// Output:
	// / text/html; charset=utf-8
	// /v1/models text/plain; charset=utf-8
}

// The console under a prefix of another mux, calling an API elsewhere
// (which must then allow the console's origin through CORS).
func ExampleNew() {
	ui, err := console.New(&console.Options{APIBase: "https://neuro.example"})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/console/", http.StripPrefix("/console", ui))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/console/")
	if err != nil {
		panic(err)
	}
	res.Body.Close()
	fmt.Println(res.StatusCode, res.Header.Get("Content-Security-Policy") != "")
	// Output:
	// 200 true
}
