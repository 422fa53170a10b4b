// Package store is the gateway's persistence: API keys, learned capabilities,
// execution traces and the client tools that packages report. One interface,
// two backends: SQLite (the embedded default, package store/sqlite) and
// PostgreSQL (for several gateway replicas, package store/postgres). Nothing a
// second replica needs may live only in one process's memory, so everything of
// that kind goes through here.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/pml-go/pml/internal/wire"
)

// ErrNotFound is returned (wrapped) when a lookup matches nothing.
var ErrNotFound = errors.New("not found")

// ErrUnavailable is returned (wrapped) when the database cannot be reached.
// Callers turn it into a clear error for the request; the store recovers by
// itself when the database is back.
var ErrUnavailable = errors.New("store unavailable")

// ErrInvalid is returned (wrapped) when the input breaks one of the store's
// rules: a required field missing, malformed JSON, a limit exceeded. The
// request is at fault; retrying it unchanged fails again.
var ErrInvalid = errors.New("invalid input")

// Scope is a tenant: every key belongs to one org and project.
type Scope struct {
	Org     string `json:"org"`
	Project string `json:"project"`
}

// APIKey is a stored key. The plaintext is never stored, only its SHA-256 hex.
type APIKey struct {
	ID        string
	Hash      string
	Scope     Scope
	CreatedAt time.Time
}

// Visibility of a capability to other keys.
type Visibility string

const (
	VisibilityPrivate Visibility = "private" // this org+project only (the default)
	VisibilityProject Visibility = "project" // same as private for now; kept for the registry contract
	VisibilityOrg     Visibility = "org"     // every project of the org
	VisibilityPublic  Visibility = "public"  // everyone
)

// Capability is learned code, callable by namespace:action.
type Capability struct {
	ID          string `json:"id"`
	Scope       Scope  `json:"scope"`
	Namespace   string `json:"namespace"`
	Action      string `json:"action"`
	Description string `json:"description"`
	Code        string `json:"code"`
	// CodeHash is what deduplicates: the gateway gives the hex SHA-256 of
	// the code's shape (analysis.Shape); empty means the SHA-256 of Code.
	CodeHash   string          `json:"code_hash"`
	ToolsUsed  []string        `json:"tools_used"`
	Routing    string          `json:"routing"` // "client" | "server"
	ArgsSchema json.RawMessage `json:"args_schema,omitempty"`
	// OutputSchema is the union of the types its successful runs returned
	// (docs/how-it-works.md "Learned capabilities"); nil until one did.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// ParamsLifted says Code reads its runs' literal values from args and
	// ArgsSchema holds their defaults and examples; false for capabilities
	// learned before parameters were lifted, served as they are.
	ParamsLifted bool `json:"params_lifted"`
	// RecentRuns are the outcomes of its last runs, oldest first: '1' a
	// success, '0' a failure (RecordCapabilityRuns), at most MaxRecentRuns.
	RecentRuns string     `json:"recent_runs"`
	Visibility Visibility `json:"visibility"`
	// UsageCount counts the runs of its shape that were learned (the
	// first saved it, each later one saved it again), and Uses its calls
	// by name (CountCapabilityUse). What every surface shows as a
	// capability's uses is their sum, TimesRun (docs/protocol.md).
	UsageCount int64 `json:"usage_count"`
	Uses       int64 `json:"uses"`
	// IntentRuns counts the learned runs whose intent was Description (in
	// any case): the first, and each later one saved with the same intent.
	// Two different tasks that happen to run one shape both count in
	// UsageCount, only one here. Learning's ranking input (Habit), not
	// shown.
	IntentRuns int64     `json:"-"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// TimesRun is how many times the capability ran: the runs of its shape
// that were learned plus its calls by name. A call is never learned again
// (a direct call is not a shape, docs/how-it-works.md), so none counts
// twice. Discover, the catalog, the admin tool and the dashboard all show
// this as `uses` (docs/protocol.md), so one number means one thing.
func (c Capability) TimesRun() int64 { return c.UsageCount + c.Uses }

// Habit reports whether the capability ran more than once for what it is
// for: learned again for the intent it was learned for, or called by name.
// Discover holds a skill that is not a habit to more before it ranks it
// first (docs/how-it-works.md "Discover and the tool graph").
func (c Capability) Habit() bool { return c.IntentRuns+c.Uses > 1 }

// CapabilityName is what code calls a capability: namespace:action.
type CapabilityName struct {
	Namespace, Action string
}

// MaxRecentRuns bounds Capability.RecentRuns.
const MaxRecentRuns = 20

// ToolEdge is one edge of a tenant's tool graph: how many runs fed From's
// result into To's arguments (Feeds) and called From before To (Follows).
// Shared says the tenant contributes the edge to the global graph
// (docs/how-it-works.md "The global layer"): both tools are ones every
// tenant sees, and the tenant has not opted out.
type ToolEdge struct {
	From, To       string
	Feeds, Follows int64
	Shared         bool
}

// MaxToolEdges bounds one tenant's tool graph in the store.
const MaxToolEdges = 4096

// ToolRelevance is what one family of a tenant's queries learned of one
// tool from the runs that followed its discovers (docs/how-it-works.md
// "Discover and the tool graph"): Family is the family's words, sorted and
// space-separated; Gain is as of UpdatedAt, decaying from then on.
type ToolRelevance struct {
	Family    string
	Tool      string
	Gain      float64
	UpdatedAt time.Time
}

// SeenDiscover is a discover waiting for the runs of the same caller that
// follow it: the family of its query and the tools it showed first.
type SeenDiscover struct {
	Caller string
	Family string
	Shown  []string
	At     time.Time
}

// Bounds of learning from use: a tenant keeps its MaxToolRelevance most
// recently updated rows and its MaxSeenDiscovers most recent discovers;
// a family is at most MaxFamilyBytes, a discover shows at most MaxShown.
const (
	MaxToolRelevance = 4096
	MaxSeenDiscovers = 64
	MaxFamilyBytes   = 512
	MaxShown         = 10
)

// GlobalEdge is one edge of the global graph: how many distinct orgs share
// it (ToolEdge.Shared), never how often any of them used it.
type GlobalEdge struct {
	From, To string
	Orgs     int64
}

// ToolType is the output schema learning inferred for one tool from a
// tenant's successful calls (types only, docs/how-it-works.md "The global
// layer"); Shared as for ToolEdge.
type ToolType struct {
	Tool   string
	Schema json.RawMessage
	Shared bool
}

// SharedToolType is one tenant's shared ToolType, as the global layer reads
// them.
type SharedToolType struct {
	Scope  Scope
	Tool   string
	Schema json.RawMessage
}

// Bounds of the global layer's rows: a tenant keeps its MaxToolTypes most
// recently updated tool types, each schema at most MaxToolTypeBytes; a read
// of the global graph or of the shared types considers at most
// MaxSharedRows of the most recently updated shared rows, whatever the
// number of tenants, and of one org at most 1/SharedOrgShares of what it
// reads (SharedPerOrg), whatever its projects: one org cannot push the
// others' rows out of the window (docs/security.md "Tenants and names").
const (
	MaxToolTypes     = 1024
	MaxToolTypeBytes = 4 << 10
	MaxSharedRows    = 65536
	SharedOrgShares  = 16
)

// SharedPerOrg is the most rows of one org a read of window shared rows
// considers: its newest, at least one.
func SharedPerOrg(window int) int { return max(window/SharedOrgShares, 1) }

// GlobalEdgeQuery is a read of the global graph (Store.GlobalToolEdges).
type GlobalEdgeQuery struct {
	MinOrgs int // edges shared by at least this many orgs (at least 1)
	Limit   int // at most this many edges, in [0, MaxSharedRows]
	// Window is how many of the newest shared edges are read: 0, or
	// anything above MaxSharedRows, is MaxSharedRows, what learning reads.
	// The fairness rule (SharedPerOrg) scales with it, so a test can prove
	// the rule on a small window instead of inserting MaxSharedRows rows.
	Window int
}

// CapabilityFilter selects capabilities visible to a scope.
type CapabilityFilter struct {
	Viewer Scope // whose view: own scope, same-org "org"/"public", others' "public"
	// Owners narrows the view to the viewer's own org or to other orgs'
	// public capabilities (AnyOwner: both).
	Owners Owners
	// Current lists only the newest version of each name, not every row.
	Current bool
	// MaxCodeChars, when positive, leaves out capabilities whose code is
	// longer, so a listing reads a bounded number of bytes.
	MaxCodeChars int
	Limit        int // 0 means no limit
	Offset       int
}

// Owners selects whose capabilities a listing holds.
type Owners int

const (
	AnyOwner  Owners = iota
	OwnOrg           // the viewer's org: its own project and what the org shares
	OtherOrgs        // other orgs' public capabilities
)

// Trace is one stored execution trace. Body is the whole sanitized trace JSON
// (see internal/tracing); the other fields are indexed copies for queries.
type Trace struct {
	ID             string
	ParentID       string
	Scope          Scope
	WorkflowID     string
	CapabilityFQDN string
	Tools          []string // tool ids used, for the tool filter
	Success        bool
	StartedAt      time.Time
	// ReceivedAt is when the gateway received the trace, by its clock
	// (zero: when PutTraces stores it). Retention keeps a tenant's newest
	// traces by it, not by StartedAt, which a package writes. It is not
	// read back.
	ReceivedAt time.Time
	Body       json.RawMessage
	// Caller names who ran or sent the trace (docs/auth.md); empty in
	// local mode.
	Caller string
	// Stats feed the dashboard's rollups when the trace is stored; they are
	// not read back.
	Stats *TraceStats
}

// TraceStats is what a stored trace adds to its tenant's dashboard rollups
// (docs/dashboard.md), in the same transaction as the trace and only when
// the trace is new, so a re-sent trace counts once. Nil adds nothing.
type TraceStats struct {
	DurationMS float64
	ErrorCode  string // empty when the run succeeded
	Tools      []ToolStat
}

// ToolStat is one tool's calls within a trace, or summed over a span.
type ToolStat struct {
	Tool    string  `json:"tool"`
	Calls   int64   `json:"calls"`
	Errors  int64   `json:"errors"`
	TotalMS float64 `json:"total_ms"`
	MaxMS   float64 `json:"max_ms"`
}

// MaxClockSkew is how far ahead of the gateway's clock a trace may say it
// started (docs/limits.md "What a posted trace may say"): the ingest refuses
// a later time, the store refuses to keep one, and a retention pass drops
// rollups of a minute past it.
const MaxClockSkew = 5 * time.Minute

// MaxDashToolsPerHour bounds the tools one tenant's hour holds in the
// dashboard's rollups (docs/dashboard.md): past it, a new tool is counted
// under OtherTools.
const MaxDashToolsPerHour = 64

// OtherTools names the rollup row of the tools past a bound (as
// tracing.OtherTools names a trace's aggregate line).
const OtherTools = "*"

// AllTenants stands for every tenant in Dashboard: an operator's view.
var AllTenants = Scope{Org: "*", Project: "*"}

// LatencyBounds are the upper bounds (ms) of the dashboard's latency
// buckets; a last bucket holds what is slower.
var LatencyBounds = [...]float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 30000, 60000}

// LatencyBucket is the bucket of a run of ms.
func LatencyBucket(ms float64) int {
	for i, b := range LatencyBounds {
		if ms <= b {
			return i
		}
	}
	return len(LatencyBounds)
}

// DashboardKeep is how long dashboard rollups are kept: the longest span
// the dashboard shows, and a day.
const DashboardKeep = 8 * 24 * time.Hour

// DashboardMinute is one minute of a tenant's executions (top-level traces).
type DashboardMinute struct {
	Minute     time.Time
	Executions int64
	Errors     int64
	Latency    [len(LatencyBounds) + 1]int64 // executions per latency bucket
	// LatencyMaxMS is the slowest execution of each bucket; 0: unknown
	// (rolled up before the rollups kept it).
	LatencyMaxMS [len(LatencyBounds) + 1]float64
}

// DashboardRows is what Dashboard reads.
type DashboardRows struct {
	Minutes []DashboardMinute // ascending
	Errors  map[string]int64  // error answers by code
	Tools   []ToolStat        // every tool called, summed
	// Capabilities are the scope's most called capabilities (all time).
	Capabilities []CapabilityUses
}

// CapabilityUses is a capability's name and its calls.
type CapabilityUses struct {
	Name string `json:"name"` // namespace:action
	Uses int64  `json:"uses"`
}

// TraceFilter selects traces of one scope. Zero fields do not filter.
// Since is inclusive and Until exclusive; Tool matches one element of
// Trace.Tools exactly. TopLevel keeps the traces without a parent: the
// executions, not the capability runs nested in them. Results come newest
// first (StartedAt, then ID).
type TraceFilter struct {
	Scope          Scope
	WorkflowID     string
	CapabilityFQDN string
	Tool           string
	Caller         string
	Success        *bool
	TopLevel       bool
	Since, Until   time.Time
	Limit, Offset  int
}

// TraceRetention is one retention pass over the traces: those started
// before Before (zero: no age limit), and those of a scope past its Keep
// newest (0: no count limit), are deleted. The count limit is checked for
// Scopes only, or for every scope over Keep when Scopes is nil. One call
// deletes at most Limit traces (0: DefaultPruneLimit), so a pass over a
// large backlog never holds the database for long.
type TraceRetention struct {
	Before time.Time
	Keep   int
	Scopes []Scope
	Limit  int
}

// DefaultPruneLimit is TraceRetention.Limit when unset.
const DefaultPruneLimit = 1000

// Bounds of the client tools one tenant can store: a report lists at most
// MaxClientToolsPerReport tools (a longer one is ErrInvalid), and a tenant
// keeps the reports of its MaxClientsPerScope most recently reporting clients
// (a new client's report evicts the oldest one's).
const (
	MaxClientToolsPerReport = 500
	MaxClientsPerScope      = 50
)

// ClientTool is a tool a package reported as available on its machine; its
// shape is the wire's.
type ClientTool = wire.ClientTool

// Store is implemented by sqlite.Store and postgres.Store; both pass
// storetest.Run. Every method is safe for concurrent use.
type Store interface {
	// Keys.
	CreateKey(ctx context.Context, k APIKey) error
	KeyByHash(ctx context.Context, hash string) (APIKey, error)
	// ListKeys lists scope's keys, oldest first; DeleteKey deletes scope's
	// key with id (another scope's is ErrNotFound).
	ListKeys(ctx context.Context, scope Scope) ([]APIKey, error)
	DeleteKey(ctx context.Context, scope Scope, id string) error

	// What runs teach discover (docs/how-it-works.md "Discover and the
	// tool graph"). AddToolWords adds each row's Weight to scope's row of
	// its tool and word in one statement per row (runs learned on two
	// replicas at once both count), then keeps scope's MaxToolWords most
	// recently updated; ToolWords returns them, newest first.
	// GlobalToolWords counts the distinct orgs of each shared word and
	// tool, each org's MaxSharedRowsPerOrg newest rows at most, and
	// answers those of at least minOrgs orgs, most orgs first.
	// WithdrawToolWords unshares scope's rows (an opt-out).
	AddToolWords(ctx context.Context, scope Scope, rows []ToolWord) error
	ToolWords(ctx context.Context, scope Scope) ([]ToolWord, error)
	GlobalToolWords(ctx context.Context, minOrgs, limit int) ([]GlobalToolWord, error)
	WithdrawToolWords(ctx context.Context, scope Scope) error

	// Approvals of other orgs' skills for clients without a package
	// (docs/security.md "Tenants and names"). ApproveSkill keeps scope's
	// approval of the version fqdn (again: unchanged); ApprovedSkills
	// answers which of fqdns scope approved; SkillApprovals lists scope's,
	// newest first; RevokeSkill deletes one (none: ErrNotFound).
	ApproveSkill(ctx context.Context, scope Scope, a SkillApproval) error
	ApprovedSkills(ctx context.Context, scope Scope, fqdns []string) (map[string]bool, error)
	SkillApprovals(ctx context.Context, scope Scope) ([]SkillApproval, error)
	RevokeSkill(ctx context.Context, scope Scope, fqdn string) error
	// PutPendingRun keeps a run waiting for an approval under id, dropping
	// scope's runs older than MaxPendingAge and past MaxPendingRuns;
	// TakePendingRun returns and deletes it (once: a second take, another
	// scope's id or an expired one is ErrNotFound).
	PutPendingRun(ctx context.Context, scope Scope, id string, payload []byte) error
	TakePendingRun(ctx context.Context, scope Scope, id string) ([]byte, error)

	// Capabilities. SaveCapability inserts c, or, when c.Scope already has a
	// capability with the same CodeHash, increments its UsageCount (and its
	// IntentRuns when c.Description is its description, in any case) and
	// returns that one unchanged otherwise (deduplication by code hash).
	SaveCapability(ctx context.Context, c Capability) (Capability, error)
	CapabilityByID(ctx context.Context, id string) (Capability, error)
	// CapabilityByName finds namespace:action among the capabilities visible to viewer,
	// preferring the viewer's own scope, then what the viewer's scope renamed
	// from that name (RenameCapability), then its org, then public ones;
	// within one scope, the most recently updated (the current version).
	CapabilityByName(ctx context.Context, viewer Scope, namespace, action string) (Capability, error)
	// ListCapabilities returns one page, ordered by namespace and action, and
	// the total count before pagination.
	ListCapabilities(ctx context.Context, f CapabilityFilter) ([]Capability, int, error)
	// UpdateCapability replaces the mutable fields (Namespace, Action,
	// Description, Visibility, ArgsSchema) of the capability with c.ID.
	// c.Scope must be the capability's own scope: another scope's
	// capability is ErrNotFound.
	UpdateCapability(ctx context.Context, c Capability) error
	// RenameCapability renames every version of scope's capability from
	// to, and keeps from as an old name of it: CapabilityByName finds it
	// under from for scope, after scope's own capabilities named from, so
	// code and skills written against the old name keep working. An old
	// name of from follows it; an old name equal to to is dropped. A name
	// scope does not have is ErrNotFound.
	RenameCapability(ctx context.Context, scope Scope, from, to CapabilityName) error
	// ForgetCapability deletes every version of scope's capability named
	// name and the old names pointing at it; ErrNotFound when there is none.
	ForgetCapability(ctx context.Context, scope Scope, name CapabilityName) error
	// CountCapabilityUse adds one call to the Uses of the capability with
	// id, in one statement (concurrent calls all count); an unknown id is
	// ErrNotFound. It changes nothing else, UpdatedAt included.
	CountCapabilityUse(ctx context.Context, id string) error
	// UpdateLearned replaces what learning refines as runs of the same
	// shape arrive (Code, ArgsSchema, OutputSchema, ParamsLifted) of the
	// capability with c.ID owned by c.Scope (else ErrNotFound). Its name,
	// visibility and counters stay.
	UpdateLearned(ctx context.Context, c Capability) error
	// RecordCapabilityRuns appends outcomes ('1' a success, '0' a failure,
	// oldest first) to the RecentRuns of the capability with id, keeping
	// the last MaxRecentRuns, in one statement; an unknown id is
	// ErrNotFound, other letters ErrInvalid. It changes nothing else.
	RecordCapabilityRuns(ctx context.Context, id, outcomes string) error

	// The tool graph (docs/how-it-works.md "The tool graph"). AddToolEdges
	// adds the counts of edges to scope's graph in one transaction, then
	// keeps its MaxToolEdges heaviest edges (the most recently updated
	// first among equals); ToolEdges returns scope's edges, heaviest first.
	AddToolEdges(ctx context.Context, scope Scope, edges []ToolEdge) error
	ToolEdges(ctx context.Context, scope Scope) ([]ToolEdge, error)

	// Learning from use (docs/how-it-works.md "Discover and the tool
	// graph"). AddSeenDiscover records a discover of scope, keeping its
	// MaxSeenDiscovers most recent; TakeSeenDiscovers returns and deletes
	// scope's discovers of caller at or after since, oldest first (a
	// discover teaches once). PutToolRelevance upserts rows in one
	// transaction (a Gain of 0 or less deletes the row), then keeps scope's
	// MaxToolRelevance most recently updated; ToolRelevance returns them.
	AddSeenDiscover(ctx context.Context, scope Scope, d SeenDiscover) error
	TakeSeenDiscovers(ctx context.Context, scope Scope, caller string, since time.Time) ([]SeenDiscover, error)
	PutToolRelevance(ctx context.Context, scope Scope, rows []ToolRelevance) error
	ToolRelevance(ctx context.Context, scope Scope) ([]ToolRelevance, error)

	// The global layer (docs/how-it-works.md "The global layer").
	// GlobalToolEdges counts, among the q.Window most recently updated
	// shared edges of every tenant, the distinct orgs sharing each edge,
	// and returns those shared by at least q.MinOrgs, most orgs first, at
	// most q.Limit. An org's edge counts once whatever its projects, and
	// the window holds at most SharedPerOrg(q.Window) edges of one org,
	// its newest. PutToolTypes upserts scope's inferred output schemas in
	// one transaction, then keeps its MaxToolTypes most recently updated;
	// ToolTypes returns them. SharedToolTypes returns the limit (at most
	// MaxSharedRows) most recently updated shared tool types of every
	// tenant, at most SharedPerOrg(limit) of one org (its newest). Unshare withdraws scope's contributions, its edges and types
	// no longer shared; a Scope without Project withdraws every project of
	// its Org.
	GlobalToolEdges(ctx context.Context, q GlobalEdgeQuery) ([]GlobalEdge, error)
	PutToolTypes(ctx context.Context, scope Scope, types []ToolType) error
	ToolTypes(ctx context.Context, scope Scope) ([]ToolType, error)
	SharedToolTypes(ctx context.Context, limit int) ([]SharedToolType, error)
	Unshare(ctx context.Context, scope Scope) error

	// Traces. PutTraces is idempotent on trace ID (a re-sent trace is
	// ignored); fresh[i] says whether traces[i] was stored by this call,
	// false for an id its scope held already or that came earlier in the
	// batch (the same transaction decides both, so two concurrent batches
	// never both count a trace as new). A trace started more than
	// MaxClockSkew after now is ErrInvalid, and nothing of its batch is
	// stored.
	PutTraces(ctx context.Context, traces []Trace) (fresh []bool, err error)
	TraceByID(ctx context.Context, scope Scope, id string) (Trace, error)
	ListTraces(ctx context.Context, f TraceFilter) ([]Trace, int, error)
	ChildTraces(ctx context.Context, scope Scope, parentID string) ([]Trace, error)
	// PruneTraces applies one retention pass and returns how many traces it
	// deleted; when that is the pass's limit, more may remain. The age limit
	// is on StartedAt; the count keeps the newest by ReceivedAt then ID. It
	// also drops dashboard rollups older than DashboardKeep, and any of a
	// minute more than MaxClockSkew ahead of now.
	PruneTraces(ctx context.Context, r TraceRetention) (int, error)
	// Dashboard sums the rollups of scope's traces since since (see
	// TraceStats): per minute, and per error code and tool over the span;
	// AllTenants sums every tenant's.
	Dashboard(ctx context.Context, scope Scope, since time.Time) (DashboardRows, error)

	// Client tools reported by packages, per scope. A report replaces that
	// client's previous one in one transaction and evicts the reports of the
	// scope's least recently reporting clients beyond MaxClientsPerScope; a
	// report over MaxClientToolsPerReport tools is ErrInvalid.
	PutClientTools(ctx context.Context, scope Scope, clientID string, tools []ClientTool) error
	ClientTools(ctx context.Context, scope Scope) ([]ClientTool, error)

	Ping(ctx context.Context) error
	Close() error
}

// SkillApproval is a kept approval of one version of another org's skill.
type SkillApproval struct {
	FQDN       string    `json:"fqdn"` // five-part: that version only
	ApprovedBy string    `json:"approved_by"`
	CreatedAt  time.Time `json:"created_at"`
}

// Bounds of the runs waiting for an approval at the gateway.
const (
	MaxPendingAge  = time.Hour
	MaxPendingRuns = 100 // per scope
)

// ToolWord is a word a tenant's runs used of a tool: their intents', or the
// discover's that led to them.
type ToolWord struct {
	Tool   string  `json:"tool"`
	Word   string  `json:"word"`
	Weight float64 `json:"weight"` // added by AddToolWords; as stored, read back
	// Shared says the row counts toward the global layer.
	Shared    bool      `json:"shared,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// GlobalToolWord is a word of a tool that Orgs distinct orgs' runs taught.
type GlobalToolWord struct {
	Tool, Word string
	Orgs       int
}

// Bounds of what runs teach discover: a tenant keeps its MaxToolWords most
// recently updated words of tools; a word is at most MaxWordBytes, a tool
// id at most MaxToolIDBytes; the global layer reads at most
// MaxSharedRowsPerOrg rows of each org.
const (
	MaxToolWords        = 20_000
	MaxWordBytes        = 32
	MaxToolIDBytes      = 256
	MaxSharedRowsPerOrg = MaxToolWords
)
