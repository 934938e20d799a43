/// The Lua scripts of the open-model schedule that `trawl bench` processes share through a rate store
/// (``SharedBenchSchedule``). Times come from the server's clock (`TIME`); numbers go back as strings.
package enum BenchScheduleScripts {
    /// KEYS: schedule, pause. ARGV: seconds between slots, horizon, lag, floor.
    /// Answers `{"slot", seconds from now (negative: overdue), slots dropped}`, `{"wait", seconds, "0"}` when the
    /// next slot is further ahead than the horizon (nothing is reserved), or `{"pause", seconds, "0"}`.
    ///
    /// The schedule key holds the next slot's time: each reservation takes it and moves it one interval on, so
    /// the slots of every process together are `interval` apart. A slot older than `lag` seconds is dropped (and
    /// counted): the schedule never hands out a backlog older than that; `floor` seconds before now is the
    /// oldest slot this caller takes (0 for a process just back from its local share: no backlog for it).
    static let reserve = """
        local now = redis.call('TIME')
        local t = tonumber(now[1]) + tonumber(now[2]) / 1000000
        local paused = tonumber(redis.call('GET', KEYS[2]) or '0')
        if paused > t then return {'pause', tostring(paused - t), '0'} end
        local interval = tonumber(ARGV[1])
        local horizon = tonumber(ARGV[2])
        local lag = tonumber(ARGV[3])
        local floor = t - math.min(lag, tonumber(ARGV[4]))
        local slot = tonumber(redis.call('GET', KEYS[1]) or tostring(t))
        local dropped = 0
        if slot < floor then
            dropped = math.floor((floor - slot) / interval)
            slot = floor
        end
        if slot > t + horizon then return {'wait', tostring(slot - t - horizon), '0'} end
        local following = slot + interval
        redis.call('SET', KEYS[1], tostring(following), 'PX', math.ceil((following - t + 60) * 1000))
        return {'slot', tostring(slot - t), tostring(dropped)}
        """

    /// KEYS: pause, schedule. ARGV: seconds. Pauses the host until `now + seconds` (a later pause already set
    /// stays) and moves the schedule's next slot to the pause's end: slots due while the host is paused are not
    /// sent by anyone (they are skipped, not a backlog to burst out when the pause ends).
    static let pause = """
        local now = redis.call('TIME')
        local t = tonumber(now[1]) + tonumber(now[2]) / 1000000
        local ends = t + tonumber(ARGV[1])
        local current = tonumber(redis.call('GET', KEYS[1]) or '0')
        if ends > current then
            redis.call('SET', KEYS[1], tostring(ends), 'PX', math.ceil((ends - t) * 1000) + 1)
        end
        local slot = tonumber(redis.call('GET', KEYS[2]) or '0')
        if slot < ends then
            redis.call('SET', KEYS[2], tostring(ends), 'PX', math.ceil((ends - t + 60) * 1000))
        end
        return 1
        """

    /// KEYS: members, schedule. ARGV: member, seconds a member stays live without a beat, "1" when joining.
    /// Marks the member live and answers how many are. A process joining when no other is live starts the
    /// schedule afresh (what an earlier run left is not a backlog of this one).
    static let beat = """
        local now = redis.call('TIME')
        local t = tonumber(now[1]) + tonumber(now[2]) / 1000000
        local ttl = tonumber(ARGV[2])
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tostring(t - ttl))
        if ARGV[3] == '1' and redis.call('ZCARD', KEYS[1]) == 0 then redis.call('DEL', KEYS[2]) end
        redis.call('ZADD', KEYS[1], tostring(t), ARGV[1])
        redis.call('PEXPIRE', KEYS[1], math.ceil(ttl * 1000))
        return redis.call('ZCARD', KEYS[1])
        """

    /// KEYS: members, schedule. ARGV: member. A process that ends leaves at once (the others' share grows); the
    /// last one to leave removes the schedule (a pause expires by itself).
    static let leave = """
        redis.call('ZREM', KEYS[1], ARGV[1])
        if redis.call('ZCARD', KEYS[1]) == 0 then redis.call('DEL', KEYS[1], KEYS[2]) end
        return 1
        """
}
