package discordtest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/neobot/neobot/adapters/discord/discordtest"
)

// A test points the code under test at URL, plays a user, and reads what
// the bot posted. Here a plain HTTP client stands in for the bot.
func Example() {
	s := discordtest.NewServer() // in a test: discordtest.New(t)
	defer s.Close()

	d := s.Mention(discordtest.Msg{User: "111", Text: "hello"}) // queued until a gateway client identifies

	req, _ := http.NewRequest("POST", s.URL()+"/api/v9/channels/"+d.ChannelID+"/messages",
		strings.NewReader(`{"content":"hi **there**"}`))
	req.Header.Set("Authorization", "Bot test")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()

	m, err := s.WaitMessage(context.Background(), func(m discordtest.Message) bool { return m.FromBot() })
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Content, len(s.Calls("POST /channels/{channel}/messages")))
	// Output: hi **there** 1
}
