/// `/drifting/NAME`: an offset (or page) listing whose rows change while it is paged, deterministically, so that
/// tests (and `trawl serve` users) can provoke drift. Each listing `NAME` counts its own requests (per server).
///
/// Rows: `n` (default 30) base rows `{"id":I,"name":"row-I"}`, I in 1...n, in that order. After the `after`-th
/// request of the listing (default 1: from the second request on), `insert` rows are put at the head (ids
/// n+1, n+2, … newest first), or `delete` rows are taken from the head; `every=K` does it again every K requests
/// after that (a listing that never settles). `hold=K`: request K of the listing gets its head and no body, the
/// connection held open (a walk stopped there, to be killed mid-walk). `stamp=1`: each row also says which request
/// of the listing served it (`"seen":K`), so the same row differs between two reads. Query: `offset` and `limit` (default 10), or `page` (from 1) and
/// `per_page`. Body: `{"items":[...],"offset":O,"total":T}` (`T`: the rows at that request).
///
/// ```text
/// GET /drifting/a?offset=0&limit=10&insert=2          -> ids 1...10, total 30
/// GET /drifting/a?offset=10&limit=10&insert=2         -> ids 9...18 (two new rows ahead), total 32
/// ```
enum DriftingListing {
    static func response(for request: InboundRequest, name: Substring, book: RequestBook) -> Response {
        let target = request.target
        let count = min(max(0, target.int("n") ?? 30), 100_000)
        let insert = min(max(0, target.int("insert") ?? 0), 100_000)
        let delete = min(max(0, target.int("delete") ?? 0), 100_000)
        let after = max(0, target.int("after") ?? 1)
        let every = target.int("every").map { max(1, $0) }
        let number = book.nextAttempt(for: "drifting/" + name)
        if target.int("hold") == number {
            return Response(
                status: 200, headers: [("Content-Type", "application/json"), ("Content-Length", "100")],
                ending: .hold, isFault: true)
        }
        var changes = number > after ? 1 : 0
        if changes > 0, let every { changes += (number - after - 1) / every }
        let inserted = min(insert * changes, 1_000_000)
        let deleted = min(delete * changes, count)
        // The new rows first, newest first, then the base rows left.
        let rows = Array(stride(from: count + inserted, to: count, by: -1)) + Array(stride(from: deleted + 1, through: count, by: 1))
        let size = max(1, min(target.int("limit") ?? target.int("per_page") ?? 10, 1_000))
        let start =
            target.int("page").map { max(0, ($0 - 1) * size) } ?? max(0, target.int("offset") ?? 0)
        let slice = start < rows.count ? rows[start..<min(rows.count, start + size)] : []
        let seen = target.int("stamp") == 1 ? ",\"seen\":\(number)" : ""
        let items = slice.map { "{\"id\":\($0),\"name\":\"row-\($0)\"\(seen)}" }.joined(separator: ",")
        return .json(200, "{\"items\":[\(items)],\"offset\":\(start),\"total\":\(rows.count)}")
    }
}
