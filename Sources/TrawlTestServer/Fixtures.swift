/// Fixed response bodies.
enum Fixtures {
    /// `/json/small`: a small API-style item listing (about 600 bytes).
    static let smallJSON = """
        {"items":[\
        {"id":1,"name":"anchor","tags":["iron","heavy"],"price":129.5,"in_stock":true},\
        {"id":2,"name":"buoy","tags":["float","orange"],"price":24.0,"in_stock":true},\
        {"id":3,"name":"cleat","tags":["steel"],"price":8.75,"in_stock":false},\
        {"id":4,"name":"dock line","tags":["nylon","20m"],"price":31.2,"in_stock":true},\
        {"id":5,"name":"fender","tags":["vinyl","white"],"price":17.95,"in_stock":true}\
        ],"total_count":5,"page":1,"per_page":5,"has_more":false,"next_cursor":null,\
        "meta":{"generated_by":"TrawlTestServer","unicode":"caf\\u00e9 \u{2693}","escaped":"a \\"quote\\""}}
        """
}
