/// A route sent with GET. `GetRoute` ... `ConnectRoute` each fix `method`:
///
/// ```swift
/// struct Search: GetRoute { var path: RoutePath { "search" } }
/// struct Upload: PostRoute {
///     var path: RoutePath { "files" }
///     var body: RouteBody { .raw(bytes, contentType: "image/png") }
/// }
/// ```
public protocol GetRoute: Route {}
extension GetRoute { public var method: HTTPMethod { .get } }

/// A route sent with POST; see `GetRoute`.
public protocol PostRoute: Route {}
extension PostRoute { public var method: HTTPMethod { .post } }

/// A route sent with PUT; see `GetRoute`.
public protocol PutRoute: Route {}
extension PutRoute { public var method: HTTPMethod { .put } }

/// A route sent with PATCH; see `GetRoute`.
public protocol PatchRoute: Route {}
extension PatchRoute { public var method: HTTPMethod { .patch } }

/// A route sent with DELETE; see `GetRoute`.
public protocol DeleteRoute: Route {}
extension DeleteRoute { public var method: HTTPMethod { .delete } }

/// A route sent with HEAD; see `GetRoute`.
public protocol HeadRoute: Route {}
extension HeadRoute { public var method: HTTPMethod { .head } }

/// A route sent with OPTIONS; see `GetRoute`.
public protocol OptionsRoute: Route {}
extension OptionsRoute { public var method: HTTPMethod { .options } }

/// A route sent with TRACE; see `GetRoute`.
public protocol TraceRoute: Route {}
extension TraceRoute { public var method: HTTPMethod { .trace } }

/// A route sent with CONNECT; see `GetRoute`.
public protocol ConnectRoute: Route {}
extension ConnectRoute { public var method: HTTPMethod { .connect } }
