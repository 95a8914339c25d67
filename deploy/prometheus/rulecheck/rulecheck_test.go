package rulecheck

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

// TestAlertRules checks alerts.yml as promtool check rules does (the same
// rulefmt.ParseFile call: the YAML's shape, every expression, label and
// annotation template), and that no alert is defined twice.
func TestAlertRules(t *testing.T) {
	groups, errs := rulefmt.ParseFile("../alerts.yml", false, model.UTF8Validation, parser.NewParser(parser.Options{}), promslog.NewNopLogger())
	for _, err := range errs {
		t.Errorf("alerts.yml: %v", err)
	}
	if groups == nil {
		t.Fatal("alerts.yml: no rule groups")
	}
	seen := map[string]bool{}
	n := 0
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			n++
			if r.Alert == "" {
				continue
			}
			if seen[r.Alert] {
				t.Errorf("alert %s is defined twice", r.Alert)
			}
			seen[r.Alert] = true
			if r.Annotations["summary"] == "" || r.Labels["severity"] == "" {
				t.Errorf("alert %s lacks a summary or a severity", r.Alert)
			}
		}
	}
	if n == 0 {
		t.Error("alerts.yml has no rules")
	}
}

// grafanaVariables replaces the dashboard's variables with values
// Prometheus can parse, as Grafana does before it sends a query.
var grafanaVariables = strings.NewReplacer(
	"$__rate_interval", "1m", "$__interval", "1m", "$__range", "6h",
	`"$instance"`, `".*"`, "${datasource}", "prometheus",
)

// TestDashboardQueries parses every query of neobot.json as PromQL.
func TestDashboardQueries(t *testing.T) {
	raw, err := os.ReadFile("../../grafana/neobot.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	p := parser.NewParser(parser.Options{})
	n := 0
	for _, panel := range dash.Panels {
		for _, q := range panel.Targets {
			n++
			if _, err := p.ParseExpr(grafanaVariables.Replace(q.Expr)); err != nil {
				t.Errorf("panel %q: %q is not PromQL: %v", panel.Title, q.Expr, err)
			}
		}
	}
	if n == 0 {
		t.Error("the dashboard has no queries")
	}
}
