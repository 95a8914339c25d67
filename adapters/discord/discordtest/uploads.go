package discordtest

import (
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
)

// MaxAttachmentBytes is Discord's limit on one upload to a server
// without boosts (10 MiB); a larger file is refused with 40005.
const MaxAttachmentBytes = 10 << 20

// readAttachments reads a message sent as Discord documents uploads: a
// multipart/form-data body whose payload_json part is the message JSON
// and whose files[n] parts are the attachments. A JSON body is returned
// as it is. A refusal sets status and its body.
func readAttachments(r *http.Request, body []byte) (payload []byte, files []File, status int, refusal any) {
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		return body, nil, 0, nil
	}
	mr := multipart.NewReader(strings.NewReader(string(body)), params["boundary"])
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, http.StatusBadRequest, apiError(50109, "The request body contains invalid multipart data.")
		}
		data, err := io.ReadAll(part)
		if err != nil {
			return nil, nil, http.StatusBadRequest, apiError(50109, "The request body contains invalid multipart data.")
		}
		name := part.FormName()
		switch {
		case name == "payload_json":
			payload = data
		case strings.HasPrefix(name, "files[") && strings.HasSuffix(name, "]"):
			if len(data) > MaxAttachmentBytes {
				return nil, nil, http.StatusRequestEntityTooLarge, apiError(40005, "Request entity too large")
			}
			if part.FileName() == "" {
				return nil, nil, http.StatusBadRequest, apiError(50035, fmt.Sprintf("Invalid Form Body: %s: a file needs a filename.", name))
			}
			files = append(files, File{Name: part.FileName(), ContentType: part.Header.Get("Content-Type"), Content: data, Size: len(data)})
		}
	}
	if payload == nil {
		payload = []byte("{}")
	}
	return payload, files, 0, nil
}
