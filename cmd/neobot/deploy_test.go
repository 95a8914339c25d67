package main

import (
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// flyTOML reads the keys of fly.toml this test needs: "section.key" ->
// value, top-level keys without a section. It understands the file's own
// subset of TOML: [section], [[section]], key = "string" or bare value.
func flyTOML(t *testing.T, root string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "fly.toml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	section := ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[] ")
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("fly.toml: cannot read %q", line)
			}
			key := strings.TrimSpace(k)
			if section != "" {
				key = section + "." + key
			}
			out[key] = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return out
}

// finalStage returns the Dockerfile's last stage, line by line, with ARG
// defaults substituted.
func finalStage(t *testing.T, root string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]string{}
	var stage []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "ARG "); ok {
			if k, v, ok := strings.Cut(rest, "="); ok {
				args[k] = v
			}
		}
		for k, v := range args {
			line = strings.ReplaceAll(line, "${"+k+"}", v)
		}
		if strings.HasPrefix(line, "FROM ") {
			stage = nil
		}
		if line != "" && !strings.HasPrefix(line, "#") {
			stage = append(stage, line)
		}
	}
	return stage
}

// TestDeployKeepsData: what the image and fly.toml make neobot write (the
// database, the manifest's tool workspace, the working directory) sits on
// the mounted volume; the image runs neobot unprivileged on a supported
// Node; and the kill timeout covers the worst-case shutdown.
func TestDeployKeepsData(t *testing.T) {
	root := repoRoot(t)
	fly := flyTOML(t, root)
	mount := fly["mounts.destination"]
	if mount == "" {
		t.Fatal("fly.toml mounts no volume")
	}
	under := func(what, p string) {
		t.Helper()
		if !path.IsAbs(p) || !strings.HasPrefix(path.Clean(p)+"/", path.Clean(mount)+"/") {
			t.Errorf("%s %q is not on the volume mounted at %s: a deploy would lose it", what, p, mount)
		}
	}

	stage := finalStage(t, root)
	var workdir, from, entry string
	env := map[string]string{}
	for _, line := range stage {
		switch {
		case strings.HasPrefix(line, "FROM "):
			from = strings.Fields(line)[1]
		case strings.HasPrefix(line, "WORKDIR "):
			workdir = strings.TrimPrefix(line, "WORKDIR ")
		case strings.HasPrefix(line, "ENTRYPOINT "):
			entry = line
		case strings.HasPrefix(line, "USER ") && strings.TrimSpace(strings.TrimPrefix(line, "USER ")) == "root":
			t.Errorf("the image runs as root: %q", line)
		case strings.HasPrefix(line, "ENV "):
			for _, kv := range strings.Fields(strings.TrimPrefix(line, "ENV ")) {
				if k, v, ok := strings.Cut(kv, "="); ok {
					env[k] = v
				}
			}
		}
	}
	for k, v := range fly {
		if k, ok := strings.CutPrefix(k, "env."); ok {
			env[k] = v // fly.toml's [env] wins over the image's
		}
	}
	under("the working directory (./workspace and anything relative)", workdir)
	under("NEO_DB_PATH", env["NEO_DB_PATH"])

	manifestPath, ok := strings.CutPrefix(env["NEO_MANIFEST"], "/app/")
	if !ok {
		t.Fatalf("NEO_MANIFEST = %q, want the image's /app/manifests", env["NEO_MANIFEST"])
	}
	m, err := loadManifest(filepath.Join(root, manifestPath))
	if err != nil {
		t.Fatalf("the image's manifest %s: %v", manifestPath, err)
	}
	for _, s := range m.Servers {
		if strings.Contains(s.Command, "npx") {
			t.Errorf("server %s runs %s: it would download at every boot; run the copy installed in the image", s.Alias, s.Command)
		}
		for _, d := range s.CreateDirs {
			if !path.IsAbs(d) {
				d = path.Join(workdir, d)
			}
			under("server "+s.Alias+"'s directory", d)
		}
	}

	if strings.Contains(from, "node:20") || !strings.HasPrefix(from, "node:") {
		t.Errorf("the image is based on %q, want Node on a supported LTS line", from)
	}
	script, err := os.ReadFile(filepath.Join(root, "deploy", "entrypoint.sh"))
	if err != nil || !strings.Contains(entry, "neobot-entrypoint") || !strings.Contains(string(script), "--reuid=node") {
		t.Errorf("the entrypoint (%q) does not drop to the node user: %v", entry, err)
	}
	if fly["checks.ready.path"] != "/readyz" {
		t.Errorf("fly.toml checks %q, want readiness (/readyz)", fly["checks.ready.path"])
	}

	cfg, _, err := loadConfig("neobot", nil, func(k string) string { return env[k] }, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	kill, err := time.ParseDuration(fly["kill_timeout"])
	if err != nil {
		t.Fatalf("kill_timeout %q: %v", fly["kill_timeout"], err)
	}
	if need := shutdownBudget(cfg); kill < need {
		t.Errorf("kill_timeout %s is shorter than the worst-case shutdown %s (NEO_SHUTDOWN_GRACE %s)", kill, need, cfg.ShutdownGrace)
	}
}

func TestVersionCarriesCommit(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v1.4.0", "0123456789abcdef0123"
	if got := versionString(); got != "v1.4.0 (0123456789ab)" {
		t.Errorf("versionString = %q, want the version and the short commit", got)
	}
}
