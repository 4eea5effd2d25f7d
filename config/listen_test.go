package config

import (
	"testing"
	"time"
)

// TestAppointmentsListener: listen.appointments and its limits come from
// the file, the environment and flags like the other listen keys, and
// default to off (the API on listen.http), 64 connections and 5 s idle.
func TestAppointmentsListener(t *testing.T) {
	file := minimal + "listen: { appointments: \"127.0.0.1:7481\", appointments_max_connections: 32 }\n"
	tests := []struct {
		name, file string
		env        map[string]string
		args       []string
		addr       string
		conns      int
		idle       time.Duration
	}{
		{"defaults", minimal, nil, nil, "", DefaultAppointmentsMaxConnections, DefaultAppointmentsIdleTimeout},
		{"file", file, nil, nil, "127.0.0.1:7481", 32, DefaultAppointmentsIdleTimeout},
		{"env", file, map[string]string{"NOWSERVING_LISTEN_APPOINTMENTS": "127.0.0.1:7482", "NOWSERVING_LISTEN_APPOINTMENTS_IDLE_TIMEOUT": "2s"}, nil,
			"127.0.0.1:7482", 32, 2 * time.Second},
		{"flags", file, map[string]string{"NOWSERVING_LISTEN_APPOINTMENTS": "127.0.0.1:7482"},
			[]string{"--listen-appointments=127.0.0.1:0", "--listen-appointments-max-connections=8"}, "127.0.0.1:0", 8, DefaultAppointmentsIdleTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := load([]byte(tt.file), Opts{Flags: parseFlags(t, tt.args), LookupEnv: env(t, tt.env)})
			if err != nil {
				t.Fatal(err)
			}
			l := c.Listen
			if l.Appointments != tt.addr || l.AppointmentsMaxConnections != tt.conns || l.AppointmentsIdleTimeout != tt.idle {
				t.Errorf("appointments %q, max_connections %d, idle_timeout %s; want %q, %d, %s",
					l.Appointments, l.AppointmentsMaxConnections, l.AppointmentsIdleTimeout, tt.addr, tt.conns, tt.idle)
			}
		})
	}
}
