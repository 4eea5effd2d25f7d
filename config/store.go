package config

import (
	"fmt"
	"net/url"
	"strings"
)

// checkHosts checks a DSN that names several hosts, and returns what is
// wrong with it ("" when nothing is). A MySQL DSN lists its servers or
// Galera nodes in tcp(h1:3306,h2:3306,...), each host or host:port. A
// PostgreSQL DSN with several hosts (postgres://u@h1,h2/db, or
// host=h1,h2) must ask for target_session_attrs=read-write (or primary):
// without it a connection may settle on a standby, and the daemon would
// dial the same read-only host again after every failover.
func checkHosts(driver Driver, dsn string) string {
	switch driver {
	case DriverMySQL:
		return checkMySQLHosts(dsn)
	case DriverPostgres:
		return checkPostgresHosts(dsn)
	}
	return ""
}

func checkMySQLHosts(dsn string) string {
	slash := strings.LastIndex(dsn, "/")
	if slash < 0 {
		return ""
	}
	netAddr := dsn[strings.LastIndex(dsn[:slash], "@")+1 : slash]
	open, close := strings.Index(netAddr, "("), strings.LastIndex(netAddr, ")")
	if open < 0 || close < open || !strings.Contains(netAddr[open:close], ",") {
		return ""
	}
	if netAddr[:open] != "tcp" {
		return fmt.Sprintf("several addresses need tcp(...), got %s(...)", netAddr[:open])
	}
	for i, a := range strings.Split(netAddr[open+1:close], ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			return fmt.Sprintf("address %d of tcp(...) is empty", i+1)
		}
		if !strings.Contains(a, ":") {
			continue // the default port
		}
		if msg := checkAddr(a); msg != "" {
			return fmt.Sprintf("address %d of tcp(...): %s", i+1, msg)
		}
	}
	return ""
}

func checkPostgresHosts(dsn string) string {
	var hosts, attrs string
	if rest, ok := strings.CutPrefix(dsn, "postgres://"); ok || strings.HasPrefix(dsn, "postgresql://") {
		if !ok {
			rest = strings.TrimPrefix(dsn, "postgresql://")
		}
		rest, query, _ := strings.Cut(rest, "?")
		authority, _, _ := strings.Cut(rest, "/")
		hosts = authority[strings.LastIndex(authority, "@")+1:]
		q, err := url.ParseQuery(query)
		if err != nil {
			return "" // pgx says what is wrong
		}
		attrs = q.Get("target_session_attrs")
	} else {
		for f := range strings.FieldsSeq(dsn) {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "host":
				hosts = v
			case "target_session_attrs":
				attrs = v
			}
		}
	}
	if !strings.Contains(hosts, ",") || attrs == "read-write" || attrs == "primary" {
		return ""
	}
	return fmt.Sprintf("several hosts (%s) need target_session_attrs=read-write, else the daemon may stay on a standby", hosts)
}
