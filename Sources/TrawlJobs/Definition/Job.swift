import Foundation
import Trawl
import TrawlEngine
import TrawlJSON

/// A bulk job: sources of paginated items, each expanded by its parameter matrix into work units.
///
/// ```swift
/// let job = Job(sources: [
///     JobSource(name: "repos", url: "https://api.github.com/orgs/{org}/repos?per_page=100",
///               headers: [JobHeader(name: "Authorization", value: "Bearer ${GITHUB_TOKEN}")],
///               pagination: .link(), items: .root,
///               matrix: [MatrixAxis(name: "org", values: ["apple", "swiftlang"])]),
/// ])
/// let units = try job.units(environment: ProcessInfo.processInfo.environment)
/// ```
///
/// Templates: `{name}` is a matrix parameter, `${NAME}` an environment variable (a secret: its value is
/// never written to state, reports or logs).
public struct Job: Sendable, Hashable {
    public var sources: [JobSource]
    /// Scheduling and retry settings given by the job file; command-line flags override them.
    public var settings: JobSettings

    public init(sources: [JobSource], settings: JobSettings = JobSettings()) {
        self.sources = sources
        self.settings = settings
    }
}

/// One paginated endpoint of a job.
public struct JobSource: Sendable, Hashable {
    /// Unique within the job; names output files (`NAME.jsonl`) and report sections.
    public var name: String
    /// URL template (`{param}`, `${ENV}`).
    public var url: String
    public var method: HTTPMethod
    /// Header templates, in order.
    public var headers: [JobHeader]
    /// Body template, sent as is.
    public var body: String?
    public var pagination: PaginationStyle
    /// Where the items are in each page (`.root` for a bare array).
    public var items: JSONKeyPath
    /// Side fields recorded per page (reported, and written with `--with-meta`).
    public var side: [JSONKeyPath]
    /// Axes of the parameter matrix; the units are their cartesian product, the first axis outermost.
    public var matrix: [MatrixAxis]
    /// Caps on each unit's walk, for APIs that refuse pages past a result cap (GitHub search answers 422 past
    /// 1,000 results): at most the pages needed for `maxItems` items (whole pages, so the last may bring a
    /// few more) and at most `maxPages` pages. A unit stopped by a cap is flagged in the report ("capped at N
    /// of M items"); slice the query (a date-window matrix) to get the rest.
    public var maxItems: Int?
    public var maxPages: Int?
    /// This source's `tls:`, over the job's `settings.tls` key by key.
    public var tls: TLSSettings?
    /// This source's `auth:` (OAuth2 client credentials), instead of the job's `settings.auth`.
    public var auth: JobAuth?
    /// `paginate` and `items` left to detection from the first page (`auto`, or absent from a job file).
    public var detectsPagination = false
    public var detectsItems = false
    /// Incremental sync (`incremental:`) and the items' identity (`primary_key:`), see ``IncrementalSpec``.
    public var incremental: IncrementalSpec?
    public var primaryKey: JSONKeyPath?
    /// The source whose items this one's URLs come from (`parent:`; see `JobFile+Parent.swift`).
    public var parent: String?
    /// Parent fields copied into each child item under `_parent` (`include_from_parent:`).
    public var includeFromParent: [JSONKeyPath] = []
    /// Each item is this member of the element at `items` (a GraphQL connection's `edges[].node`: `node`).
    public var itemMember: String?
    /// A `{name}` in a header or the body that names no matrix axis is text, not an error: the command line sends
    /// `-H` and `-d` (a GraphQL query's `nodes{id}`) as given, as curl does. The URL keeps the check.
    public var bracesOutsideMatrixAreText = false

    public init(
        name: String, url: String, method: HTTPMethod = .get, headers: [JobHeader] = [], body: String? = nil,
        pagination: PaginationStyle, items: JSONKeyPath, side: [JSONKeyPath] = [], matrix: [MatrixAxis] = [],
        maxItems: Int? = nil, maxPages: Int? = nil
    ) {
        self.name = name
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.pagination = pagination
        self.items = items
        self.side = side
        self.matrix = matrix
        self.maxItems = maxItems
        self.maxPages = maxPages
    }
}

/// A header template.
public struct JobHeader: Sendable, Hashable {
    public var name: String
    public var value: String
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// One axis of a parameter matrix: a name and its values, each value binding one or more template
/// parameters (a date window binds `{name}` to its first day and `{name.end}` to its last).
public struct MatrixAxis: Sendable, Hashable {
    public var name: String
    /// A list, or a range (``range(_:_:)``) whose values are made when read.
    public var values: MatrixValues

    public init(name: String, values: MatrixValues) {
        self.name = name
        self.values = values
    }

    public init(name: String, values: [MatrixValue]) {
        self.init(name: name, values: MatrixValues(values))
    }

    public init(name: String, values: [String]) {
        self.init(name: name, values: values.map { MatrixValue($0) })
    }
}

/// One value of an axis: `{axis}` binds `value`; `extra` binds `{axis.NAME}` (a date window's `end`).
public struct MatrixValue: Sendable, Hashable {
    public var value: String
    /// `(NAME, value)` pairs bound as `{axis.NAME}`.
    public var extra: [MatrixBinding]

    public init(_ value: String, extra: [MatrixBinding] = []) {
        self.value = value
        self.extra = extra
    }
}

public struct MatrixBinding: Sendable, Hashable {
    public var name: String
    public var value: String
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// Scheduling, retries and rate limits.
public struct JobSettings: Sendable, Hashable {
    /// Requests in flight across the job.
    public var concurrency: Int = 16
    /// Requests in flight per host (`scheme://host:port`).
    public var perHost: Int = 8
    /// Requests per second per host (token bucket, burst 1 second's worth); `nil` for no limit.
    public var ratePerHost: Double? = nil
    /// Attempts per page, the first included.
    public var attempts: Int = 5
    /// First backoff; doubles each attempt, with full jitter.
    public var backoff: Duration = .milliseconds(250)
    /// Largest single backoff.
    public var maxBackoff: Duration = .seconds(30)
    /// Longest pause a `Retry-After` or rate-limit reset may impose on a host; longer ones are capped (and
    /// reported).
    public var maxWait: Duration = .seconds(120)
    /// Per-request total timeout.
    public var timeout: Duration = .seconds(60)
    /// Origins (`https://host[:port]`) that receive the job's credentials when a page names them; any other
    /// origin a next link or URL names gets the page without credentials.
    public var trustedOrigins: [String] = []
    /// Header names (lowercased) that are credentials on top of the built-in ones: stripped across origins and
    /// redacted.
    public var sensitiveHeaders: Set<String> = []
    /// Statuses that end a unit's serial walk cleanly after its first page (an API that answers 404 past the
    /// last page).
    public var stopStatuses: Set<Int> = []
    /// A unit that ends with fewer items than its server announced (in the body or a header) is no failure of the
    /// job (`--allow-short` / `allow_short`): it is flagged, and `trawl fetch` exits 0.
    public var allowShort = false
    /// A walk with a primary key that drifted and did not settle on a re-read (`--allow-drift` / `allow_drift`):
    /// it is flagged, each key written once, and `trawl fetch` exits 0.
    public var allowDrift = false
    /// Longest wait for a connection (`--connect-timeout`); `nil` for the engine's default.
    public var connectTimeout: Duration?
    /// CAs, client certificate and verification for every source (a source's `tls:` overrides key by key).
    public var tls: TLSSettings = TLSSettings()
    /// The HTTP version to ask for (`settings.http`); `nil` offers HTTP/2 over https, as curl does.
    public var http: Client.HTTPVersionPreference?
    /// OAuth2 client credentials for every source without its own `auth:`.
    public var auth: JobAuth?
    /// The Redis server holding the rate budget and host pauses shared by every process of the job
    /// (`settings.rate_store`, `--rate-store`); `nil`: this process's own (a shard's share of `ratePerHost`).
    public var rateStore: RateStoreAddress?
    /// Per-host concurrency that halves on 429/503 or a pause and grows back by one, up to `perHost`
    /// (`settings.adaptive`, `--adaptive`).
    public var adaptive = false
    /// Conditional requests (`cache:`, `--cache`): the job's private response cache, and whether a page answered
    /// `304` writes its items again (`on_not_modified: write`, the default) or none (`skip`).
    public var cache: String?
    public var skipNotModified = false
    /// Where `trawl fetch` serves the job's Prometheus metrics (`settings.metrics_listen`, `--metrics-listen`).
    public var metricsListen: MetricsAddress?

    public init() {}
}

/// One unit of work: a source with one combination of matrix values.
public struct WorkUnit: Sendable {
    /// Index of the source in the job.
    public var sourceIndex: Int
    public var source: String
    /// Position of the unit in the job's full (unsharded) unit list; output order follows it.
    public var ordinal: Int
    /// The matrix parameters, in axis order.
    public var parameters: [MatrixBinding]
    /// Stable identity, e.g. `repos org=apple`: keys the checkpoint and the shard hash.
    public var id: String
    /// The first page's request, templates expanded (secrets included: never persist it).
    public var request: Request
    public var pagination: PaginationStyle
    public var items: JSONKeyPath
    public var side: [JSONKeyPath]
    /// The source's caps (see `JobSource.maxItems`).
    public var maxItems: Int? = nil
    public var maxPages: Int? = nil
    /// The TLS options of the unit's client (the job's settings and the source's `tls:`).
    public var tls: Client.TLSOptions = .init()
    /// The source's OAuth2 client credentials, expanded (secrets included: never persist them).
    public var auth: JobAuth? = nil
    /// The source's incremental sync and primary key; `window` is set by the runner from the committed mark.
    public var incremental: IncrementalSpec? = nil
    public var primaryKey: JSONKeyPath? = nil
    var window: IncrementalWindow? = nil
    /// A child unit's `"_parent":{…}` member (`include_from_parent:`), put first in each of its items.
    var parentFields: [UInt8]? = nil
    /// Each item is this member of the element read (`node` of a GraphQL edge).
    public var itemMember: String? = nil
}
