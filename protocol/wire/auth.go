package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"strconv"
)

// NonceSize is the length of the CHALLENGE nonce and of the AUTH MAC.
const NonceSize = 32

// ComputeMAC returns the AUTH proof: HMAC-SHA256 keyed with the device secret
// over the 32-byte nonce followed by the device id's UTF-8 bytes (no length,
// no terminator).
func ComputeMAC(secret, nonce []byte, deviceID string) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write(nonce)
	h.Write([]byte(deviceID))
	return h.Sum(nil)
}

// VerifyMAC reports, in constant time, whether mac is the AUTH proof for
// secret, nonce and deviceID.
func VerifyMAC(secret, nonce []byte, deviceID string, mac []byte) bool {
	return hmac.Equal(mac, ComputeMAC(secret, nonce, deviceID))
}

// DerivedKey returns the idempotency key the daemon uses for a mutating
// request sent without one: "<device id>/<boot nonce, 16 hex digits>/<request
// id, decimal>". It is stable across reconnects and daemon restarts as long as
// the device keeps its boot nonce and request id.
func DerivedKey(deviceID string, bootNonce uint64, requestID uint32) string {
	return fmt.Sprintf("%s/%016x/%s", deviceID, bootNonce, strconv.FormatUint(uint64(requestID), 10))
}
