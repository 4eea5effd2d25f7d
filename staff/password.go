// Package staff is the people who use the browser pages: their accounts
// (kept by the store, queue.AccountStore), argon2id password hashes,
// login sessions with an idle time-out, CSRF tokens, and the login rate
// limit per name and per address. A password is never stored, logged or
// kept in memory past the check: only its hash is.
package staff

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Params are argon2id's costs. DefaultParams are OWASP's recommendation
// (19 MiB, 2 passes, 1 lane): about 30 ms a check on this project's
// 2-core machine.
type Params struct {
	Memory  uint32 // KiB
	Time    uint32
	Threads uint8
}

// DefaultParams are the costs new hashes use.
var DefaultParams = Params{Memory: 19 * 1024, Time: 2, Threads: 1}

// Password lengths accepted (in bytes): a longer one is refused before
// hashing, so a huge body cannot make argon2 work for nothing.
const (
	MinPassword = 8
	MaxPassword = 256
)

// ErrBadPassword is a password that cannot be set (too short or long).
var ErrBadPassword = errors.New("staff: password must be 8 to 256 bytes")

// Hash returns password's argon2id hash in PHC form:
// $argon2id$v=19$m=19456,t=2,p=1$SALT$KEY (base64 without padding).
func Hash(password string, p Params) (string, error) {
	if len(password) < MinPassword || len(password) > MaxPassword {
		return "", ErrBadPassword
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("staff: salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, 32)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// Verify reports whether password matches hash (a Hash result). A hash
// that cannot be read matches nothing.
func Verify(hash, password string) bool {
	if len(password) > MaxPassword {
		return false
	}
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var v int
	var p Params
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return false
	}
	// Bounds: a stored hash is ours, but a hash from elsewhere must not
	// make one check take a gigabyte.
	if p.Memory == 0 || p.Memory > 256*1024 || p.Time == 0 || p.Time > 16 || p.Threads == 0 {
		return false
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	key, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(key) == 0 || len(key) > 64 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, uint32(len(key)))
	return subtle.ConstantTimeCompare(got, key) == 1
}

// NewToken is 32 random bytes, base64url: a session id or a CSRF token.
func NewToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
