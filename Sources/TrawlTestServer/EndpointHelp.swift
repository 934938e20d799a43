extension TestServer {
    /// One line (or a few) per endpoint, at most 79 columns so that `trawl serve --help` shows them unwrapped:
    /// the text of `trawl serve --help`, of what `trawl serve` prints when it starts, and of the `/` endpoint.
    ///
    /// ```swift
    /// print(TestServer.endpointHelp)
    /// ```
    public static let endpointHelp = """
        GET /                             these lines as JSON: {"endpoints": TEXT}
        GET /bytes/N[?chunked=1][&gzip=1][&chunk=K]
            N pattern bytes (byte i = i % 251); chunked or gzip
        GET /gzip/N                       same as /bytes/N?gzip=1 (gzip, chunked)
        GET /json/small                   a fixed ~600-byte JSON item listing
        ANY /echo
            JSON of method, path, query, headers, body (body up to 8 MB)
        ANY /said?h=NAME,NAME             /echo with only the headers named
        ANY /upload                       counts the request body: {"bytes": N}
        POST /multipart
            streams multipart/form-data: {"parts":[{name, filename, content_type, size,
            sha256, value (fields <= 1 KiB)}], "boundary"}; malformed: 400
        GET /download/N[?seed=S]
            N seeded bytes (DownloadContent) with ETag "S-N", Last-Modified, Range
            bytes=A-|A-B|-S (206/416) and If-Range (ETag or date)
            &mode=ignore-range|changing|wrong-range
                no ranges | new seed per request | 206 of another range
            &mode=ignore-if-range
                new seed per request, and Range honoured whatever If-Range says
            &etag=strong|weak|none
                ETag "S-N" (default) | W/"S-N" (never matches If-Range) | no ETag
            &cut=K&rate=B&delay_ms=D&chunk=C
                K body bytes then RST | ~B bytes/s | D ms per write
            &hold=K
                K body bytes, then the connection stays open and silent
            &filename=F
                Content-Disposition: attachment; filename="F" (F verbatim)
        GET /status/CODE
            that status with {"status": CODE} (1xx, 204, 304: no body)
        GET /delay/MS                     waits MS ms, then {"delayed": MS}
        GET /drip?bytes=N&interval=MS     Content-Length N, one byte every MS ms
        GET /stall?after=N
            Content-Length N+1000, sends N bytes, then nothing
        GET /reset/N
            Content-Length 2N, sends N bytes, then TCP RST
        GET /short/N
            Content-Length N+100, sends N bytes, then closes (FIN)
        GET /badchunk
            chunked: one valid chunk, then a malformed size line
        GET /redirect?to=URL[&status=S]   S (default 302) with Location: URL
        GET /redirect/N[?status=S]        chain /redirect/N-1 ... /redirect/0 -> /echo
        GET /loop, /loop-a, /loop-b
            redirect loops (/loop -> /loop; /loop-a -> /loop-b -> /loop-a)
        GET /headers?Name=value&...
            each query pair as a response header, in order; body {}
        GET /close                        {} with Connection: close, then closes
        GET /protected?token=T
            {"ok":true} with Authorization: Bearer T, else 401 {"error", "code"}
        POST /oauth/token?realm=R&id=I&secret=S[&ttl=T][&delay_ms=D]
            OAuth2 client credentials (basic or post) for client I with secret S;
            tokens R-1, R-2, ...
        GET /oauth/items?realm=R[&uses=K]&n=N&per_page=P
            /paged/page for a realm's token (K uses each), else 401
        GET /oauth/stats?realm=R
            {"token_requests", "auth", "scopes", "rejected"}
        GET /family/list?items=JSON&per_page=K
            the given JSON array, paginated ({"items", "total_pages"})
        GET /family/kids/SEG?n=N&per_page=K[&fail=SEG]
            N children {"parent":SEG,"k":i} of the raw segment
        GET /search/repositories?q=Q&per_page=K
            the README's search: /paged/page over 250 items
        GET /feed/NAME?since=DATE&per_page=K
            a changing feed, oldest first: [{"id","seq","updated_at","rev"}] with ETag,
            Last-Modified and Link rel="next" (page=P); until=DATE (exclusive: since
            and until make the window [since, until)), since_seq=N, until_seq=N,
            after=SEQ, before=SEQ, order=desc, no_store=1, delay_ms=D. Under `trawl
            serve` a feed starts with items when first asked for, then grows and
            changes by itself
        GET /drifting/NAME?offset=O&limit=L&insert=N[&delete=N][&after=K][&every=K]
            an offset (or page=P&per_page=L) listing of n rows (default 30) that
            changes while it is paged: N rows put at (or taken from) the head after
            request K (default 1) of that NAME, again every K requests with every=K
            ({"items":[{"id","name"}],"offset","total"}): drift for --primary-key;
            stamp=1 adds "seen" (the request that served the row); hold=K answers
            request K with a head and no body (a walk to kill)
        POST /shop/token
            the demo shop's OAuth2 client credentials grant for client_id demo,
            client_secret demo-secret (HTTP Basic or form body): {"access_token",
            "token_type": "Bearer", "expires_in": 3600}. Every other /shop/ path
            answers 401 without Authorization: Bearer TOKEN
        GET /shop/customers?page=P&per_page=K
            40 customers {"id","name","country"}, K (default 10) a page:
            {"customers":[...],"page","total_pages"}
        GET /shop/customers/ID/orders?per_page=K
            the customer's orders {"id","customer_id","total_cents","status"}, a bare
            array, Link rel="next"
        GET /shop/feed/NAME?since=DATE&per_page=K
            /feed/NAME's items, its Link paging by seq (after=SEQ), so an item changed
            between two pages is not skipped
        GET /paged/STYLE?n=N&per_page=K
            N items paginated as page|offset|cursor|token|next|link (delay, delay_page,
            jitter, fail_page); token: next_cursor "" at the end, end=null for null,
            loop_to=P for a cursor cycle back to page P
            &tag=X
                realistic items (tag, score, created_at, active), deterministic per (X,
                id)
            &fault_KIND=P1,P2,...
                pages that misbehave on their first fault_times (default 1) requests;
                KIND: 429 (Retry-After: retry_after, default 1; retry_after_date=1 for
                an HTTP date), 5xx (503), reset (half the body, RST), trunc (half the
                body, FIN), drip (body over drip_ms, default 500), hold (half the body,
                then silence), 404
            &rate_KIND=R
                KIND 429|5xx|reset|trunc for a deterministic fraction R of targets
            &ratelimit_page=P
                page P: 200 with X-RateLimit-Remaining: 0, X-RateLimit-Reset: epoch
                (ratelimit_style=ietf: RateLimit-Remaining: 0, RateLimit-Reset: delta)
        POST /graphql?n=N&per_page=K
            a Relay connection data.items of N items {"id","name"}: the body's
            variables.after is the cursor, variables.first the page size; nodes
            and/or edges{cursor node} as the query names them, pageInfo{hasNextPage
            endCursor}, rateLimit{remaining resetAt} when asked; cost=C[&bucket=B]
            [&restore=R] adds Shopify's extensions.cost; throttled_at=P refuses page P
            once with a THROTTLED error; errors_at=P
            (error=TEXT, huge=1) answers errors on page P, null_cursor_at=P
            hasNextPage without a cursor
        POST /bodypaged?n=N
            N items {"id"} paged by the JSON body: page.cursor, page.number or offset,
            page.size or limit; {"items":[...],"meta":{"next","total"}}
        """
}
