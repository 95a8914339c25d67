package main

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestEntrypointDropsToTheUser runs deploy/entrypoint.sh as root against
// a root-owned temporary volume, as fly starts the image: the process it
// starts runs as the unprivileged user, and the volume ends up owned by
// it. This machine has no "node" user, so the script runs with nobody in
// node's place and the temporary volume in /data's; the rest is the script
// as shipped.
func TestEntrypointDropsToTheUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the entrypoint's root path needs root")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no nobody user")
	}
	group, err := user.LookupGroupId(nobody.Gid)
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "entrypoint.sh"))
	if err != nil {
		t.Fatal(err)
	}
	// A world-traversable directory: nobody must reach the fake neobot.
	dir, err := os.MkdirTemp("", "neobot-entrypoint-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	volume, bin := filepath.Join(dir, "data"), filepath.Join(dir, "bin")
	for _, d := range []string{filepath.Join(volume, "workspace"), bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(volume, "neobot.db"), []byte("db"), 0o600); err != nil { // root's, as on a restored volume
		t.Fatal(err)
	}
	// The fake neobot reports who it runs as and its arguments.
	fake := "#!/bin/sh\necho \"$(id -u) $(id -g) $*\" > " + filepath.Join(volume, "ran") + "\n"
	if err := os.WriteFile(filepath.Join(bin, "neobot"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	text := string(script)
	for _, r := range []struct{ old, new string }{
		{"node:node", nobody.Username + ":" + group.Name},
		{"--reuid=node --regid=node", "--reuid=" + nobody.Username + " --regid=" + group.Name},
		{" /data", " " + volume},
	} {
		if !strings.Contains(text, r.old) {
			t.Fatalf("entrypoint.sh no longer has %q: update this test with it", r.old)
		}
		text = strings.ReplaceAll(text, r.old, r.new)
	}
	entry := filepath.Join(dir, "entrypoint.sh")
	if err := os.WriteFile(entry, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", entry, "check", "--live")
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin:/usr/sbin:/sbin"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("entrypoint.sh = %v\n%s", err, out)
	}
	ran, err := os.ReadFile(filepath.Join(volume, "ran"))
	if want := nobody.Uid + " " + nobody.Gid + " check --live\n"; err != nil || string(ran) != want {
		t.Errorf("neobot ran as %q (%v), want %q: the unprivileged user, with the arguments", ran, err, want)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	for _, p := range []string{volume, filepath.Join(volume, "workspace"), filepath.Join(volume, "neobot.db")} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if owner := st.Sys().(*syscall.Stat_t).Uid; int(owner) != uid {
			t.Errorf("%s is owned by uid %d after the entrypoint, want %s's (%d)", p, owner, nobody.Username, uid)
		}
	}
}
