package wire

import (
	"slices"
	"testing"

	"github.com/pml-go/pml/internal/tools"
)

// gitlabTools are a server's tools for the fit tests below, each tool of
// the skill carrying the words of the intent its one run taught it, as
// learning from use writes them (tools.Info.Learned).
func gitlabTools(learned string) []tools.Info {
	return []tools.Info{
		{ID: "gitlab:create_merge_request", Description: "Create a new merge request in a GitLab project."},
		{ID: "gitlab:create_merge_request_note", Description: "Add a note (comment) to a merge request."},
		{ID: "gitlab:get_merge_request_conflicts", Description: "Get the conflicts of a merge request."},
		{ID: "gitlab:list_branches", Description: "List the branches of a GitLab project.", Learned: learned},
		{ID: "gitlab:delete_branch", Description: "Delete a branch of a GitLab project.", Learned: learned},
		{ID: "gitlab:mark_all_todos_done", Description: "Mark all of the user's pending todos as done.", Learned: learned},
		{ID: "slack:slack_post_message", Description: "Post a new message to a Slack channel."},
		{ID: "github:create_pull_request_review", Description: "Create a review on a pull request."},
	}
}

const cleanupIntent = "Clean up our GitLab project: delete the merged feature branches and clear my todos"

func cleanupSkill(repeated bool) (tools.Info, DiscoveredTool) {
	info := tools.Info{ID: "cap:clean_gitlab_project", Description: cleanupIntent + ". Uses gitlab:list_branches, gitlab:delete_branch, gitlab:mark_all_todos_done."}
	d := DiscoveredTool{Kind: "capability", Routing: "server", Repeated: repeated,
		ToolsUsed: []string{"gitlab:list_branches", "gitlab:delete_branch", "gitlab:mark_all_todos_done"}}
	return info, d
}

func rankWithSkill(t *testing.T, repeated bool, query string) []string {
	t.Helper()
	learned := "clean gitlab project delete merged feature branches clear todos "
	all := gitlabTools(learned)
	info, d := cleanupSkill(repeated)
	all = append(all, info)
	meta := func(id string) DiscoveredTool {
		if id == info.ID {
			return d
		}
		return DiscoveredTool{Kind: "tool", Routing: "server"}
	}
	var ids []string
	for _, hit := range RankTools(all, DiscoverRequest{Query: query, Limit: 10}, meta, nil, nil).Tools {
		ids = append(ids, hit.ID)
	}
	return ids
}

// A skill run once, learned for another task of the same server, does not
// take a top place from the tools a new task needs, though the query names
// its server and shares words with its intent ("GitLab", "merge",
// "feature"), and though its one run taught its tools those words
// (docs/how-it-works.md "Discover and the tool graph"). Asked its own task
// in other words, it ranks first.
func TestSkillRunOnceFitsOnlyItsTask(t *testing.T) {
	other := "Open a merge request on GitLab from feature/search into main and leave a note on it asking for a review."
	got := rankWithSkill(t, false, other)
	if i := slices.Index(got, "cap:clean_gitlab_project"); i >= 0 && i < 3 {
		t.Fatalf("a skill learned for another task takes place %d: %v", i+1, got)
	}
	for _, need := range []string{"gitlab:create_merge_request", "gitlab:create_merge_request_note"} {
		if i := slices.Index(got, need); i < 0 || i >= 3 {
			t.Fatalf("%s is not in the top 3: %v", need, got)
		}
	}
	own := "Tidy the GitLab project: delete merged feature branches and clear the todos."
	if got := rankWithSkill(t, false, own); len(got) == 0 || got[0] != "cap:clean_gitlab_project" {
		t.Fatalf("its own task in other words does not find the skill first: %v", got)
	}
}

// A filler sentence of a task finds nothing well: it takes no turn among
// the top hits, and its best tool does not rank as a need's best.
func TestWeakNeedTakesNoTurn(t *testing.T) {
	all := []tools.Info{
		{ID: "weather:get_forecast", Description: "Get the weather forecast for a city: temperature, rain and wind by day."},
		{ID: "weather:get_alerts", Description: "Get the active weather alerts for a city."},
		{ID: "weather:get_history", Description: "Get the past weather of a city."},
		{ID: "tickets:open_ticket", Description: "Open a ticket with customer support."},
	}
	query := "Get the weather forecast for Lyon for tomorrow, with rain and wind. Please ensure all findings are well supported."
	var ids []string
	for _, hit := range RankTools(all, DiscoverRequest{Query: query, Limit: 10}, toolHit, nil, nil).Tools {
		ids = append(ids, hit.ID)
	}
	if needs := tools.Needs(query); len(needs) < 2 || needs[len(needs)-1] != "Please ensure all findings are well supported" {
		t.Fatalf("needs: %q", needs)
	}
	if i := slices.Index(ids, "tickets:open_ticket"); i >= 0 && i < 3 {
		t.Fatalf("the filler's tool takes place %d: %v", i+1, ids)
	}
	if len(ids) == 0 || ids[0] != "weather:get_forecast" {
		t.Fatalf("the need's tool is not first: %v", ids)
	}
}
