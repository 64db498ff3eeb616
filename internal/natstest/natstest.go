// Package natstest starts NATS servers in one JetStream cluster inside a
// process, for the programs that measure a Neuro cluster on loopback.
package natstest

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Start starts n servers, storing under dir, routed to each other as
// one JetStream cluster. URLs lists their client addresses.
func Start(dir string, n int) ([]*server.Server, error) {
	ports := make([]int, n)
	var routes []string
	for i := range ports {
		ports[i] = FreePort()
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", ports[i]))
	}
	var out []*server.Server
	for i := range n {
		s, err := server.NewServer(&server.Options{ServerName: fmt.Sprintf("s%d", i), Host: "127.0.0.1", Port: FreePort(), NoLog: true, NoSigs: true,
			JetStream: true, StoreDir: filepath.Join(dir, fmt.Sprintf("s%d", i)), JetStreamMaxStore: 4 << 30,
			Cluster: server.ClusterOpts{Name: "bench", Host: "127.0.0.1", Port: ports[i], NoAdvertise: true},
			Routes:  server.RoutesFromStr(strings.Join(routes, ","))})
		if err != nil {
			return nil, err
		}
		go s.Start()
		if !s.ReadyForConnections(10 * time.Second) {
			return nil, fmt.Errorf("NATS server %d did not start", i)
		}
		out = append(out, s)
	}
	return out, nil
}

// URLs are the servers' client URLs, comma-separated.
func URLs(ss []*server.Server) string {
	var us []string
	for _, s := range ss {
		us = append(us, s.ClientURL())
	}
	return strings.Join(us, ",")
}

// FreePort is a TCP port on 127.0.0.1 that nothing listens on now.
func FreePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
