package slacktest

import (
	"encoding/json"
	"net/url"
	"strings"
)

// checkAssistant refuses what Slack's assistant methods refuse: a title
// missing from assistant.threads.setTitle; suggested prompts that are not
// one to four prompts, each with a title and a message.
func checkAssistant(method string, p url.Values) string {
	switch method {
	case "assistant.threads.setTitle":
		if strings.TrimSpace(p.Get("title")) == "" {
			return "invalid_arguments"
		}
	case "assistant.threads.setSuggestedPrompts":
		var prompts []struct {
			Title   string `json:"title"`
			Message string `json:"message"`
		}
		if json.Unmarshal([]byte(p.Get("prompts")), &prompts) != nil || len(prompts) == 0 || len(prompts) > 4 {
			return "invalid_arguments"
		}
		for _, pr := range prompts {
			if pr.Title == "" || pr.Message == "" {
				return "invalid_arguments"
			}
		}
	}
	return ""
}
