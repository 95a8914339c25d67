package llm

import (
	"bytes"
	"image"
	_ "image/gif" // DecodeConfig reads GIF sizes, for Tokens
	_ "image/jpeg"
	_ "image/png"
	"net/http"
)

// Image is a picture in a message: its bytes and their type.
type Image struct {
	// Name is what the picture is called where it came from (the
	// attachment's file name, the tool that returned it), for the text
	// that stands in for it where it is not shown.
	Name string `json:"name,omitempty"`
	// MIMEType is one of ImageTypes, found from the bytes by Sniff.
	MIMEType string `json:"mime_type"`
	// Data is the picture's bytes (base64 in JSON, as stored).
	Data []byte `json:"data"`
}

// imageTypes are the picture formats sent to models: the ones every
// vision-capable chat-completions provider takes.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// SniffImage returns the picture type of data, read from its bytes and
// never from a name or a claimed type, and whether it is one models take
// (PNG, JPEG, GIF or WebP).
func SniffImage(data []byte) (string, bool) {
	mt := http.DetectContentType(data)
	return mt, imageTypes[mt]
}

// imageTokensUnknown is charged for a picture whose size cannot be read
// (WebP, or bytes that do not decode): a 768x1536 picture's cost.
const imageTokensUnknown = 85 + 170*6

// Tokens estimates what the picture costs a model, the way OpenAI's
// high-detail vision prices it: the picture is fitted within 2048x2048,
// then its short side to 768, and each 512-pixel tile costs 170 tokens
// on top of a base of 85. Other providers charge in the same range.
func (i Image) Tokens() int {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(i.Data))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return imageTokensUnknown
	}
	w, h := float64(cfg.Width), float64(cfg.Height)
	if s := 2048 / max(w, h); s < 1 {
		w, h = w*s, h*s
	}
	if s := 768 / min(w, h); s < 1 {
		w, h = w*s, h*s
	}
	tiles := int((w+511)/512) * int((h+511)/512)
	return 85 + 170*tiles
}
