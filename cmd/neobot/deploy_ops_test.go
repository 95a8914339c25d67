package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// metricName matches neobot's metric names in rules, queries and source.
var metricName = regexp.MustCompile(`\bneobot_[a-z0-9_]+\b`)

// exportedMetrics returns the names neobot registers (metrics.go), with
// the series names a histogram adds.
func exportedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	src, err := os.ReadFile("metrics.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`"(neobot_[a-z0-9_]+)"`).FindAllSubmatch(src, -1) {
		name := string(m[1])
		out[name] = true
		if strings.HasSuffix(name, "_seconds") {
			for _, s := range []string{"_bucket", "_count", "_sum"} {
				out[name+s] = true
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("found only %d metric names in metrics.go: %v", len(out), out)
	}
	return out
}

// unknownMetrics returns the neobot_ names in text that neobot does not
// export.
func unknownMetrics(text string, exported map[string]bool) []string {
	var bad []string
	for _, name := range metricName.FindAllString(text, -1) {
		if !exported[name] && !slices.Contains(bad, name) {
			bad = append(bad, name)
		}
	}
	return bad
}

// TestAlertRules: deploy/prometheus/alerts.yml names only metrics neobot
// exports, and covers what an operator must hear about. Prometheus's own
// parser checks the rules in deploy/prometheus/rulecheck, a module of its
// own (make test runs it).
func TestAlertRules(t *testing.T) {
	path := filepath.Join(repoRoot(t), "deploy", "prometheus", "alerts.yml")
	rules, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bad := unknownMetrics(string(rules), exportedMetrics(t)); len(bad) > 0 {
		t.Errorf("alerts.yml names metrics neobot does not export: %v", bad)
	}
	for _, alert := range []string{"NeobotNotReady", "NeobotDiskFull", "NeobotTurnsFailing", "NeobotModelErrors", "NeobotGateBacklog", "NeobotDailyBudgetNearlySpent"} {
		if !strings.Contains(string(rules), "alert: "+alert+"\n") {
			t.Errorf("alerts.yml lacks %s", alert)
		}
	}
}

// TestGrafanaDashboard: deploy/grafana/neobot.json is a dashboard whose
// every query names only metrics neobot exports.
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "grafana", "neobot.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("neobot.json is not JSON: %v", err)
	}
	if dash.UID == "" || dash.Title == "" || len(dash.Panels) == 0 {
		t.Fatalf("neobot.json: title %q, uid %q, %d panels; want a dashboard", dash.Title, dash.UID, len(dash.Panels))
	}
	exported := exportedMetrics(t)
	shown := map[string]bool{}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			names := metricName.FindAllString(q.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q: query %q names no neobot metric", p.Title, q.Expr)
			}
			if bad := unknownMetrics(q.Expr, exported); len(bad) > 0 {
				t.Errorf("panel %q: query %q names metrics neobot does not export: %v", p.Title, q.Expr, bad)
			}
			for _, n := range names {
				shown[n] = true
			}
		}
	}
	for _, v := range dash.Templating.List {
		if bad := unknownMetrics(v.Definition, exported); len(bad) > 0 {
			t.Errorf("variable %q names metrics neobot does not export: %v", v.Definition, bad)
		}
	}
	for _, must := range []string{"neobot_ready", "neobot_turns_total", "neobot_model_calls_total", "neobot_gates_pending", "neobot_store_disk_full"} {
		if !shown[must] {
			t.Errorf("the dashboard does not show %s", must)
		}
	}
}
