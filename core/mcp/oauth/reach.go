package oauth

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// netClass is the kind of network an address is on. Discovery may lead
// neobot only to public addresses, and to the class of the configured
// MCP server itself: a server's metadata must not send neobot's requests
// into the network neobot runs in.
type netClass int

const (
	classPublic netClass = iota
	classLoopback
	classPrivate
	classLinkLocal
)

func (c netClass) String() string {
	switch c {
	case classLoopback:
		return "loopback"
	case classPrivate:
		return "private"
	case classLinkLocal:
		return "link-local"
	}
	return "public"
}

// cgnat is the shared address space of RFC 6598, private in all but name.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// classOf is the class of ip. Unspecified, multicast and other special
// addresses count as private: no discovery document belongs there.
func classOf(ip netip.Addr) netClass {
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return classLoopback
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		return classLinkLocal
	case ip.IsPrivate() || cgnat.Contains(ip) || !ip.IsGlobalUnicast():
		return classPrivate
	}
	return classPublic
}

// hostClass is the class of a URL's host without resolving it: an IP
// literal's, loopback for localhost names, and ok false for any other
// name.
func hostClass(host string) (netClass, bool) {
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return classOf(ip), true
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return classLoopback, true
	}
	return classPublic, false
}

// serverClass is the class of the configured MCP server's host: of its
// address literal, or of the addresses its name resolves to (the least
// public of them). A name that does not resolve counts as public.
func serverClass(ctx context.Context, server *url.URL) netClass {
	if c, ok := hostClass(server.Hostname()); ok {
		return c
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", server.Hostname())
	if err != nil {
		return classPublic
	}
	c := classPublic
	for _, ip := range ips {
		c = max(c, classOf(ip))
	}
	return c
}

// reach says whether neobot may send discovery, registration and token
// requests to addresses of a class, given the configured server's class.
type reach struct{ server netClass }

// allows reports whether c may be reached: public addresses, and those
// of the configured server's own class.
func (r reach) allows(c netClass) bool { return c == classPublic || c == r.server }

// check refuses a URL named by discovery whose host is an address (or a
// localhost name) of a class neobot may not reach. Names are checked
// again when they are dialed (see dialControl).
func (r reach) check(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%s %q is not a URL", what, raw)
	}
	if c, ok := hostClass(u.Hostname()); ok && !r.allows(c) {
		return r.refusal(what, raw, c)
	}
	return nil
}

func (r reach) refusal(what, raw string, c netClass) error {
	return fmt.Errorf("%s %s is on a %s address, and the MCP server is not (it is on a %s one); refusing to send requests there", what, raw, c, r.server)
}

// dialControl refuses a connection to an address of a class neobot may
// not reach, whatever name led there (DNS answers, redirects).
func (r reach) dialControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("oauth: dial %s: not an address", address)
	}
	if c := classOf(ap.Addr()); !r.allows(c) {
		return r.refusal("the address", address, c)
	}
	return nil
}

// client returns hc with its dials guarded, when its transport is an
// *http.Transport (or the default); another RoundTripper is used as it
// is, checked by URL only. A proxy the transport is configured with
// (HTTPS_PROXY) is dialed unguarded: it is the operator's, and it sees
// the target's name, not neobot. The guarded transport keeps no idle
// connections: discovery and token requests are few, and the copy is
// not shared.
func (r reach) client(hc *http.Client) *http.Client {
	tr, ok := hc.Transport.(*http.Transport)
	if hc.Transport == nil {
		tr, ok = http.DefaultTransport.(*http.Transport)
	}
	if !ok {
		return hc
	}
	proxies := map[string]bool{}
	if tr.Proxy != nil {
		for _, target := range []string{"https://neobot.invalid/", "http://neobot.invalid/"} {
			req, _ := http.NewRequest(http.MethodGet, target, nil)
			if pu, err := tr.Proxy(req); err == nil && pu != nil {
				proxies[canonicalAddr(pu)] = true
			}
		}
	}
	plain := &net.Dialer{Timeout: 30 * time.Second}
	guarded := &net.Dialer{Timeout: 30 * time.Second, Control: r.dialControl}
	g := tr.Clone()
	g.DisableKeepAlives = true
	g.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if proxies[addr] {
			return plain.DialContext(ctx, network, addr)
		}
		return guarded.DialContext(ctx, network, addr)
	}
	c := *hc
	c.Transport = g
	return &c
}

// canonicalAddr is a proxy URL's host:port, as a dial names it.
func canonicalAddr(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}
