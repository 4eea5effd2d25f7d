// Package escpos renders queue tickets as ESC/POS bytes for thermal receipt
// printers and sends them to network printers over raw TCP (port 9100).
//
// The byte sequences follow the Epson "ESC/POS Application Programming Guide /
// ESC/POS Command Reference" (TM series). The commands used are:
//
//	ESC @          initialize printer
//	ESC a n        justification (0 left, 1 centre, 2 right)
//	ESC E n        emphasized (bold) on/off
//	GS ! n         character size (width and height magnification 1..8)
//	FS &  / FS .   select / cancel Kanji (double-byte) character mode;
//	               Chinese text is sent in GB18030 while Kanji mode is on
//	LF, ESC d n    print and line feed, print and feed n lines
//	GS ( k         2D code symbol, QR Code: function 165 (model), 167 (module
//	               size), 169 (error correction level), 180 (store data),
//	               181 (print symbol)
//	GS v 0         print raster bit image (QR codes for printers without GS ( k)
//	GS V 66 n      feed paper to the cutting position plus n and cut partially
//	DLE EOT n      real-time status transmission: 1 printer, 2 offline cause,
//	               4 roll paper sensor
//
// Render is pure: it turns a Ticket and a Layout into bytes and never touches
// a clock or a network. Dump decodes ESC/POS bytes into a readable listing and
// ScanCommands splits a byte stream into whole commands; both are used by the
// golden tests and by the fake printer in package escpostest. Printer talks to
// a real or fake printer and reports paper out, cover open and silence as the
// typed errors in errors.go.
package escpos
