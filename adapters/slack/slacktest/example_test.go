package slacktest_test

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/neobot/neobot/adapters/slack/slacktest"
)

// A test points the code under test at APIURL, plays a user, and reads what
// the bot posted. Here slack-go stands in for the bot.
func Example() {
	s := slacktest.NewServer() // in a test: slacktest.New(t)
	defer s.Close()

	d := s.Mention(slacktest.Msg{User: "UALICE", Text: "hello"}) // queued until a Socket Mode client connects

	bot := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURL()))
	if _, _, err := bot.PostMessage("C0GENERAL", slack.MsgOptionText("hi *Alice*", false), slack.MsgOptionTS(d.TS)); err != nil {
		fmt.Println(err)
		return
	}

	m, err := s.WaitMessage(context.Background(), func(m slacktest.Message) bool {
		return m.FromBot() && m.ThreadTS == d.TS
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Channel, m.Text, len(s.Calls("chat.postMessage")))
	// Output: C0GENERAL hi *Alice* 1
}
