package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/neuro-go/neuro/httpapi"
	"github.com/neuro-go/neuro/models"
	_ "github.com/neuro-go/neuro/models/all" // the neuro-1 language models
	"github.com/neuro-go/neuro/runtime"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu"
)

// A server on the built-in models, mounted under a prefix of a
// program's own mux. Mock devices keep the example fast: the models'
// tokenizers, limits and deployments are real, and nothing runs.
func ExampleNew() {
	rt := runtime.New(nil)
	defer rt.Close()
	if err := models.Register(rt); err != nil {
		panic(err)
	}
	if _, err := models.Deploy(context.Background(), rt, &models.DeployOptions{Mock: true}); err != nil {
		panic(err)
	}
	srv, err := httpapi.New(rt, &httpapi.Options{Keys: map[string]string{"sk-example": "alice"}, Mock: true})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/neuro/", http.StripPrefix("/neuro", srv))

	req := httptest.NewRequest("POST", "/neuro/v1/chat/completions",
		strings.NewReader(`{"model":"neuro-1","messages":[{"role":"user","content":"Hi"}],"max_tokens":8}`))
	req.Header.Set("Authorization", "Bearer sk-example")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, req)
	fmt.Println(w.Code, strings.Contains(w.Body.String(), `"model":"neuro-1-standard"`))
	// Output: 200 true
}
