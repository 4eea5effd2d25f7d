package wire

// The methods that make each struct a Message. They hold no logic: encoding,
// decoding and validation follow the struct's declaration (schema.go).

// Type returns TypeHello.
func (*Hello) Type() MsgType { return TypeHello }

// AppendBinary appends the payload of m to dst.
func (m *Hello) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *Hello) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeChallenge.
func (*Challenge) Type() MsgType { return TypeChallenge }

// AppendBinary appends the payload of m to dst.
func (m *Challenge) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *Challenge) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeAuth.
func (*Auth) Type() MsgType { return TypeAuth }

// AppendBinary appends the payload of m to dst.
func (m *Auth) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *Auth) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeWelcome.
func (*Welcome) Type() MsgType { return TypeWelcome }

// AppendBinary appends the payload of m to dst.
func (m *Welcome) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *Welcome) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeHeartbeat.
func (*Heartbeat) Type() MsgType { return TypeHeartbeat }

// AppendBinary appends the payload of m to dst.
func (m *Heartbeat) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *Heartbeat) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeError.
func (*ErrorMsg) Type() MsgType { return TypeError }

// AppendBinary appends the payload of m to dst.
func (m *ErrorMsg) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *ErrorMsg) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeTakeTicket.
func (*TakeTicket) Type() MsgType { return TypeTakeTicket }

// AppendBinary appends the payload of m to dst.
func (m *TakeTicket) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *TakeTicket) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeCallNext.
func (*CallNext) Type() MsgType { return TypeCallNext }

// AppendBinary appends the payload of m to dst.
func (m *CallNext) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *CallNext) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeCallNumber.
func (*CallNumber) Type() MsgType { return TypeCallNumber }

// AppendBinary appends the payload of m to dst.
func (m *CallNumber) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *CallNumber) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeRecall.
func (*Recall) Type() MsgType { return TypeRecall }

// AppendBinary appends the payload of m to dst.
func (m *Recall) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *Recall) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeNoShow.
func (*NoShow) Type() MsgType { return TypeNoShow }

// AppendBinary appends the payload of m to dst.
func (m *NoShow) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *NoShow) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeReenter.
func (*Reenter) Type() MsgType { return TypeReenter }

// AppendBinary appends the payload of m to dst.
func (m *Reenter) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *Reenter) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeStart.
func (*Start) Type() MsgType { return TypeStart }

// AppendBinary appends the payload of m to dst.
func (m *Start) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *Start) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeComplete.
func (*Complete) Type() MsgType { return TypeComplete }

// AppendBinary appends the payload of m to dst.
func (m *Complete) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *Complete) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeTransfer.
func (*Transfer) Type() MsgType { return TypeTransfer }

// AppendBinary appends the payload of m to dst.
func (m *Transfer) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *Transfer) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeCancel.
func (*Cancel) Type() MsgType { return TypeCancel }

// AppendBinary appends the payload of m to dst.
func (m *Cancel) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *Cancel) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypePause.
func (*Pause) Type() MsgType { return TypePause }

// AppendBinary appends the payload of m to dst.
func (m *Pause) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *Pause) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeResume.
func (*Resume) Type() MsgType { return TypeResume }

// AppendBinary appends the payload of m to dst.
func (m *Resume) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *Resume) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeStatus.
func (*Status) Type() MsgType { return TypeStatus }

// AppendBinary appends the payload of m to dst.
func (m *Status) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *Status) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeSubscribe.
func (*Subscribe) Type() MsgType { return TypeSubscribe }

// AppendBinary appends the payload of m to dst.
func (m *Subscribe) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *Subscribe) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeReprint.
func (*Reprint) Type() MsgType { return TypeReprint }

// AppendBinary appends the payload of m to dst.
func (m *Reprint) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *Reprint) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeOK.
func (*OK) Type() MsgType { return TypeOK }

// AppendBinary appends the payload of m to dst.
func (m *OK) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *OK) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeTicket.
func (*Ticket) Type() MsgType { return TypeTicket }

// AppendBinary appends the payload of m to dst.
func (m *Ticket) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *Ticket) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeSnapshot.
func (*Snapshot) Type() MsgType { return TypeSnapshot }

// AppendBinary appends the payload of m to dst.
func (m *Snapshot) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *Snapshot) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeEvent.
func (*Event) Type() MsgType { return TypeEvent }

// AppendBinary appends the payload of m to dst.
func (m *Event) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *Event) Decode(src []byte) error { return decodeMessage(src, m) }

// Type returns TypeCheckIn.
func (*CheckIn) Type() MsgType { return TypeCheckIn }

// AppendBinary appends the payload of m to dst.
func (m *CheckIn) AppendBinary(dst []byte) ([]byte, error) { return appendMessage(dst, m) }

// Decode replaces m with the payload in src (see Message).
func (m *CheckIn) Decode(src []byte) error { return decodeMessage(src, m) }
