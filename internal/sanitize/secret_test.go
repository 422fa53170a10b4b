package sanitize

import "testing"

func TestHasSecret(t *testing.T) {
	san := New([]string{"s3cr3t-from-dotenv"})
	for text, want := range map[string]bool{
		`const token = "ghp_` + "abcdefghijklmnopqrstuvwxyz0123456789" + `"; return token`:    true,
		`return await mcp.http.get({url: "https://bob:hunter2@example.invalid/"})`:            true,
		`const headers = {Authorization: "Bearer abcdef0123456789"}`:                          true,
		`const password = "correct horse"`:                                                    true,
		"-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----":                true,
		`return await mcp.fx.env({value: "s3cr3t-from-dotenv"})`:                              true,
		`const token = args.token; return await mcp.api.call({token})`:                        false,
		`return await mcp.json.parse({data: '{"n": 41}'})`:                                    false,
		`return "mail bob@example.invalid or call +1 415 555 0100, card 4111 1111 1111 1111"`: false,
		`const password = "[REDACTED]"`:                                                       false,
		"":                                                                                    false,
		"\xff\xfe plain":                                                                      false,
	} {
		if got := san.HasSecret(text); got != want {
			t.Errorf("HasSecret(%q) = %v, want %v", text, got, want)
		}
	}
	if New(nil).HasSecret(`return await mcp.fx.env({value: "s3cr3t-from-dotenv"})`) {
		t.Error("a value counts as a secret without being given")
	}
}

func TestFlagNamesTheRule(t *testing.T) {
	s := New([]string{"plainvalue-from-dotenv"})
	for text, want := range map[string]string{
		"read_file":                                "",
		"ceo.salary@corp.example":                  "an e-mail address",
		`pw = "hunter2hunter2"`:                    "a secret",
		"call +44 20 7946 0958 now":                "a phone number",
		"4111 1111 1111 1111":                      "a card number",
		"123-45-6789":                              "a social security number",
		"bplainvalue-from-dotenv":                  "a secret",
		"ghp_abcdefghijklmnopqrstuvwxyz0123456789": "a secret",
	} {
		if got := s.Flag(text); got != want {
			t.Errorf("Flag(%q) = %q, want %q", text, got, want)
		}
	}
}

// FlagPersonal applies the personal-data rules alone: a placeholder where
// a credential would be is no secret, one before a domain is an address.
func TestFlagPersonal(t *testing.T) {
	s := New(nil)
	for text, want := range map[string]string{
		"x@corp-internal.example":         "an e-mail address",
		"Authorization: Bearer x":         "",
		"sk_live_51H8xY2abcdefghij":       "",
		"call +33 6 12 34 56 78":          "a phone number",
		"card 4111 1111 1111 1111":        "a card number",
		"postgres://:@db.example.com/app": "",
	} {
		if got := s.FlagPersonal(text); got != want {
			t.Errorf("FlagPersonal(%q) = %q, want %q", text, got, want)
		}
	}
}
