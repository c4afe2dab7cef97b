package app

import (
	"io"
	"net/http"
	"sync"

	"k8s.io/client-go/rest"
)

// maxRequestsInFlight bounds the scheduler client's requests in flight,
// watches aside. The API server serves 100 streams per HTTP/2 connection
// by default, and the informers' watches hold some of them; past that,
// client-go opens more connections, each with its own TLS handshake and
// buffers. A backlog of pods that each write in PreBind (a volume's
// claimRef, a claim's allocation) would otherwise put a request per pod in
// flight at once, and the API server answers them no sooner for it.
const maxRequestsInFlight = 64

// maxEventRequestsInFlight bounds the event client's requests in flight:
// the FailedScheduling writer's (binder.FailureEvents, as many workers)
// and client-go's recorder's, which writes the other events each from a
// goroutine of its own. The event client shares the scheduler client's
// connection (the same TLS configuration, one cached transport); past the
// connection's 100 streams every request would dial a connection of its
// own, with a TLS handshake each. 64 + 16 + 8 + the watches stay near 100.
const maxEventRequestsInFlight = 16

// maxScheduledEventRequestsInFlight bounds the requests in flight of the
// client that writes the Scheduled events.
const maxScheduledEventRequestsInFlight = 8

// limitInFlight makes cfg's clients wait for one of n slots before each
// request that is not a watch, and free it when the response's body is
// closed (client-go always reads and closes it). A
// request whose context ends while it waits fails with the context's
// error, as it would on the wire.
func limitInFlight(cfg *rest.Config, n int) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	slots := make(chan struct{}, n)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &inFlightLimiter{next: rt, slots: slots}
	})
	return cfg
}

type inFlightLimiter struct {
	next  http.RoundTripper
	slots chan struct{}
}

func (l *inFlightLimiter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Query().Get("watch") == "true" {
		return l.next.RoundTrip(req)
	}
	select {
	case l.slots <- struct{}{}:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	resp, err := l.next.RoundTrip(req)
	if err != nil {
		<-l.slots
		return nil, err
	}
	resp.Body = &slotBody{ReadCloser: resp.Body, release: func() { <-l.slots }}
	return resp, nil
}

// slotBody frees its request's slot when it is closed, once.
type slotBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *slotBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}

// WrappedRoundTripper lets client-go's debugging wrappers see through.
func (l *inFlightLimiter) WrappedRoundTripper() http.RoundTripper { return l.next }
