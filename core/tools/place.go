package tools

import (
	"github.com/neobot/neobot/core"
	"github.com/neobot/neobot/core/mcp"
)

// placeOf returns where in was said, for a server that runs one process
// per place (see mcp.Place).
func placeOf(in core.Inbound) mcp.Place {
	return mcp.Place{
		Platform: in.Thread.Platform, Workspace: in.Thread.Workspace, User: in.User,
		Personal: Personal(in),
	}
}

// Personal reports whether in was said in a place that belongs to its
// author alone rather than to a team: a direct message, or a workspace
// whose people are strangers to one another — every web user is in
// workspace "web", every Discord direct message in "@me". There a
// server's {workspace} is the author's own, so two web users, or two
// people writing to the bot directly, never share a tool workspace.
func Personal(in core.Inbound) bool {
	if in.DM {
		return true
	}
	switch in.Thread.Platform + "/" + in.Thread.Workspace {
	case "web/web", "discord/@me":
		return true
	}
	return false
}
