package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/neobot/neobot/core/llm"
)

// StoppedMark ends the stored words of an answer a user's stop cut short:
// the model's next turn reads that the answer was not finished, and a
// platform reading the transcript back shows the words as stopped.
const StoppedMark = "\n\n_(stopped)_"

// StoppedAnswer encodes the words an answer had shown when a user's stop
// cut it short as a transcript entry (an assistant message marked
// partial, ending with StoppedMark), for a platform that keeps those
// words on screen to store them, so the transcript and the model's next
// turn see what the user saw. It belongs to no turn: a stopped turn is
// not resumed.
func StoppedAnswer(text string) ([]byte, error) {
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("agent: a stopped answer with no words")
	}
	msg := llm.AssistantMessage(text + StoppedMark)
	data, err := json.Marshal(record{V: recordVersion, Msg: &msg, Partial: true})
	if err != nil {
		return nil, fmt.Errorf("agent: encode a stopped answer: %w", err)
	}
	return data, nil
}
