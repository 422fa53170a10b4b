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
