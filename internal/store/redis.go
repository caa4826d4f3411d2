package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisOptions configure the Redis (or Valkey) store that several
// instances share.
type RedisOptions struct {
	// URL is redis://[user:password@]host:port[/db] or rediss:// for TLS.
	URL string
	// Prefix namespaces every key ssatd writes; "" is "ssatd:".
	Prefix string
	// PoolSize bounds the connections to Redis; 0 is 32. A request past it
	// waits PoolTimeout for one, then fails (and identity degrades).
	PoolSize int
	// Timeouts; 0 takes the default in brackets. They are short: the
	// store is read on the request path, and a slow store must cost a page
	// little.
	DialTimeout  time.Duration // 500ms
	ReadTimeout  time.Duration // 250ms
	WriteTimeout time.Duration // 250ms
	PoolTimeout  time.Duration // 250ms
	Now          func() time.Time
}

// Redis is the shared store. Each entry is a hash: v (value), m
// (metadata, when written), g (generation, from one counter, so never
// reused), e (expiry, Unix ms on the instances' clocks, 0 for none); Redis's
// own expiry, set to the TTL, frees the memory. Conditional writes are one
// Lua script, so they are atomic on the server.
type Redis struct {
	c      *redis.Client
	prefix string
	now    func() time.Time
}

// OpenRedis connects lazily: a Redis that is down makes operations fail
// with ErrUnavailable, not OpenRedis.
func OpenRedis(o RedisOptions) (*Redis, error) {
	opt, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, fmt.Errorf("redis URL: %w", err)
	}
	orDefault := func(d, def time.Duration) time.Duration {
		if d > 0 {
			return d
		}
		return def
	}
	opt.PoolSize = 32
	if o.PoolSize > 0 {
		opt.PoolSize = o.PoolSize
	}
	opt.DialTimeout = orDefault(o.DialTimeout, 500*time.Millisecond)
	opt.ReadTimeout = orDefault(o.ReadTimeout, 250*time.Millisecond)
	opt.WriteTimeout = orDefault(o.WriteTimeout, 250*time.Millisecond)
	opt.PoolTimeout = orDefault(o.PoolTimeout, 250*time.Millisecond)
	// One retry of a command (a pooled connection Redis closed), one of a
	// dial, with short pauses: the defaults (3 retries, 5 dials 100ms
	// apart) made a call on a Redis that is down take 0.8s.
	opt.MaxRetries = 1
	opt.MaxRetryBackoff = 50 * time.Millisecond
	opt.DialerRetries = 1
	opt.DialerRetryTimeout = 20 * time.Millisecond
	opt.ContextTimeoutEnabled = true
	if o.Prefix == "" {
		o.Prefix = "ssatd:"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Redis{c: redis.NewClient(opt), prefix: o.Prefix, now: o.Now}, nil
}

func (s *Redis) key(k string) string { return s.prefix + "k:" + k }
func (s *Redis) genKey() string      { return s.prefix + "gen" }

func redisUnavailable(err error) error { return fmt.Errorf("%w: redis: %w", ErrUnavailable, err) }

func (s *Redis) nowMS() int64 { return s.now().UnixMilli() }

// liveAt: an expiry field e (Unix ms, "0" none) is not past now.
func liveAt(e string, now int64) bool {
	ms, err := strconv.ParseInt(e, 10, 64)
	return err == nil && (ms == 0 || now < ms)
}

func (s *Redis) Get(ctx context.Context, key string) (Entry, bool, error) {
	vals, err := s.c.HMGet(ctx, s.key(key), "v", "m", "g", "e").Result()
	if err != nil {
		return Entry{}, false, redisUnavailable(err)
	}
	g, _ := vals[2].(string)
	e, _ := vals[3].(string)
	if g == "" || !liveAt(e, s.nowMS()) {
		return Entry{}, false, nil
	}
	gen, err := strconv.ParseUint(g, 10, 64)
	if err != nil {
		return Entry{}, false, redisUnavailable(fmt.Errorf("entry %q: bad generation %q", key, g))
	}
	v, _ := vals[0].(string)
	out := Entry{Value: []byte(v), Generation: gen}
	if m, ok := vals[1].(string); ok {
		out.Meta = []byte(m)
	}
	return out, true, nil
}

// setScript writes KEYS[1] when the condition holds. ARGV: condition kind
// (0 always, 1 if absent, 2 if at generation ARGV[2]), now (ms), value,
// metadata, whether there is metadata, expiry (ms, 0 none), TTL (ms, 0
// none). KEYS[2] is the generation counter.
var setScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'g', 'e')
local exists = false
if cur[1] then
  local e = tonumber(cur[2] or '0') or 0
  exists = (e == 0) or (e > tonumber(ARGV[3]))
end
if ARGV[1] == '1' and exists then return 0 end
if ARGV[1] == '2' and ((not exists) or cur[1] ~= ARGV[2]) then return 0 end
local g = redis.call('INCR', KEYS[2])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'v', ARGV[4], 'g', g, 'e', ARGV[7])
if ARGV[6] == '1' then redis.call('HSET', KEYS[1], 'm', ARGV[5]) end
if ARGV[8] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[8]) end
return 1
`)

func (s *Redis) Set(ctx context.Context, key string, value, meta []byte, ttl time.Duration, cond Cond) (bool, error) {
	if key == "" {
		return false, errors.New("store: empty key")
	}
	now := s.nowMS()
	var expiry, ttlMS int64
	if ttl > 0 {
		ttlMS = max(ttl.Milliseconds(), 1)
		expiry = now + ttlMS
	}
	hasMeta := "0"
	if meta != nil {
		hasMeta = "1"
	}
	n, err := setScript.Run(ctx, s.c, []string{s.key(key), s.genKey()},
		cond.kind, strconv.FormatUint(cond.gen, 10), now, value, meta, hasMeta, expiry, ttlMS).Int()
	if err != nil {
		return false, redisUnavailable(err)
	}
	return n == 1, nil
}

func (s *Redis) Delete(ctx context.Context, key string) error {
	if err := s.c.Del(ctx, s.key(key)).Err(); err != nil {
		return redisUnavailable(err)
	}
	return nil
}

// globEscape quotes the characters SCAN's MATCH pattern treats specially.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// CountPrefix scans the keyspace with SCAN (never KEYS, which blocks the
// server) and counts the live entries.
func (s *Redis) CountPrefix(ctx context.Context, prefix string, limit int) (int, error) {
	match := globEscape(s.key(prefix)) + "*"
	n := 0
	var cursor uint64
	now := s.nowMS()
	for {
		keys, next, err := s.c.Scan(ctx, cursor, match, 256).Result()
		if err != nil {
			return 0, redisUnavailable(err)
		}
		if len(keys) > 0 {
			pipe := s.c.Pipeline()
			cmds := make([]*redis.StringCmd, len(keys))
			for i, k := range keys {
				cmds[i] = pipe.HGet(ctx, k, "e")
			}
			if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
				return 0, redisUnavailable(err)
			}
			for _, c := range cmds {
				if e, err := c.Result(); err == nil && liveAt(e, now) {
					n++
					if n >= limit {
						return n, nil
					}
				}
			}
		}
		if cursor = next; cursor == 0 {
			return n, nil
		}
	}
}

func (s *Redis) Ping(ctx context.Context) error {
	if err := s.c.Ping(ctx).Err(); err != nil {
		return redisUnavailable(err)
	}
	return nil
}

func (s *Redis) Close() error { return s.c.Close() }
