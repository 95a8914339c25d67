package slack

import "context"

// publishHome publishes user's Home tab.
func (a *Adapter) publishHome(ctx context.Context, team, user string) {}
