/*
 * ecarte-c — a simple Écarté bot in C, written from PROTOCOL.md alone.
 *
 * Line-delimited JSON over stdin/stdout (protocol version 1).  Standard library
 * only: a small JSON parser (objects, arrays, strings with escapes including
 * \uXXXX and surrogate pairs, numbers, true/false/null) builds a tree for each
 * line; unknown fields and unknown message types are ignored (§2.5).
 *
 * Strategy (stateless: every decision is taken from the request's view):
 *   propose  stand with 2+ trumps, else propose;
 *   answer   accept unless holding 2+ trumps;
 *   discard  discard the non-trump non-kings (the closest option in `legal`);
 *   mark     always mark the king of trumps;
 *   trick    follow with the lowest card that wins the trick, else the lowest
 *            card; lead the highest card (trumps first).
 * The answer is always one of the strings of view.legal, echoed verbatim.
 *
 * Build: cc -O2 -std=c11 -Wall -Wextra -o engines/c/ecarte-c engines/c/bot.c
 */

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ JSON tree */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } JType;

typedef struct JVal JVal;
struct JVal {
    JType type;
    int boolean;
    char *str;      /* J_STR: decoded bytes (NUL-terminated); J_NUM: raw token */
    size_t len;     /* length of str */
    size_t n;       /* number of items (J_ARR, J_OBJ) */
    size_t cap;
    JVal **items;   /* values */
    char **keys;    /* J_OBJ: keys (decoded, NUL-terminated) */
};

typedef struct {
    const char *s;
    size_t pos, end;
    int depth;
    int failed;
} Parser;

#define MAX_DEPTH 256

static void jfree(JVal *v) {
    size_t i;
    if (v == NULL) return;
    for (i = 0; i < v->n; i++) {
        jfree(v->items[i]);
        if (v->keys != NULL) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    free(v);
}

static JVal *jnew(JType t) {
    JVal *v = calloc(1, sizeof *v);
    if (v == NULL) {
        fputs("ecarte-c: out of memory\n", stderr);
        exit(1);
    }
    v->type = t;
    return v;
}

static void *xrealloc(void *p, size_t size) {
    void *q = realloc(p, size);
    if (q == NULL) {
        fputs("ecarte-c: out of memory\n", stderr);
        exit(1);
    }
    return q;
}

static void skip_ws(Parser *p) {
    while (p->pos < p->end) {
        char c = p->s[p->pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') p->pos++;
        else break;
    }
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int read_hex4(Parser *p, unsigned *out) {
    unsigned v = 0;
    int i;
    if (p->end - p->pos < 4) return 0;
    for (i = 0; i < 4; i++) {
        int h = hexval(p->s[p->pos + (size_t)i]);
        if (h < 0) return 0;
        v = v * 16 + (unsigned)h;
    }
    p->pos += 4;
    *out = v;
    return 1;
}

typedef struct {
    char *b;
    size_t n, cap;
} Buf;

static void buf_put(Buf *b, char c) {
    if (b->n + 1 >= b->cap) {
        b->cap = b->cap ? b->cap * 2 : 32;
        b->b = xrealloc(b->b, b->cap);
    }
    b->b[b->n++] = c;
    b->b[b->n] = '\0';
}

static void buf_utf8(Buf *b, unsigned cp) {
    if (cp < 0x80) {
        buf_put(b, (char)cp);
    } else if (cp < 0x800) {
        buf_put(b, (char)(0xC0 | (cp >> 6)));
        buf_put(b, (char)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        buf_put(b, (char)(0xE0 | (cp >> 12)));
        buf_put(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        buf_put(b, (char)(0x80 | (cp & 0x3F)));
    } else {
        buf_put(b, (char)(0xF0 | (cp >> 18)));
        buf_put(b, (char)(0x80 | ((cp >> 12) & 0x3F)));
        buf_put(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        buf_put(b, (char)(0x80 | (cp & 0x3F)));
    }
}

/* Parse a string starting at the opening quote; returns a malloc'd buffer. */
static char *parse_string_raw(Parser *p, size_t *len_out) {
    Buf b = {NULL, 0, 0};
    buf_put(&b, 'x');
    b.n = 0;
    b.b[0] = '\0';
    p->pos++; /* opening quote */
    while (p->pos < p->end) {
        char c = p->s[p->pos++];
        if (c == '"') {
            *len_out = b.n;
            return b.b;
        }
        if ((unsigned char)c < 0x20) break; /* raw control character: invalid */
        if (c != '\\') {
            buf_put(&b, c);
            continue;
        }
        if (p->pos >= p->end) break;
        c = p->s[p->pos++];
        switch (c) {
        case '"': buf_put(&b, '"'); break;
        case '\\': buf_put(&b, '\\'); break;
        case '/': buf_put(&b, '/'); break;
        case 'b': buf_put(&b, '\b'); break;
        case 'f': buf_put(&b, '\f'); break;
        case 'n': buf_put(&b, '\n'); break;
        case 'r': buf_put(&b, '\r'); break;
        case 't': buf_put(&b, '\t'); break;
        case 'u': {
            unsigned cp, lo;
            if (!read_hex4(p, &cp)) goto fail;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                /* high surrogate: combine with a following low surrogate if any */
                if (p->end - p->pos >= 6 && p->s[p->pos] == '\\' && p->s[p->pos + 1] == 'u') {
                    size_t save = p->pos;
                    p->pos += 2;
                    if (read_hex4(p, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    } else {
                        p->pos = save;
                        cp = 0xFFFD;
                    }
                } else {
                    cp = 0xFFFD;
                }
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                cp = 0xFFFD; /* lone low surrogate */
            }
            buf_utf8(&b, cp);
            break;
        }
        default:
            goto fail;
        }
    }
fail:
    free(b.b);
    p->failed = 1;
    return NULL;
}

static JVal *parse_value(Parser *p);

static void push_item(JVal *v, char *key, JVal *item) {
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 8;
        v->items = xrealloc(v->items, v->cap * sizeof *v->items);
        if (v->type == J_OBJ) v->keys = xrealloc(v->keys, v->cap * sizeof *v->keys);
    }
    v->items[v->n] = item;
    if (v->type == J_OBJ) v->keys[v->n] = key;
    v->n++;
}

static int match_word(Parser *p, const char *w) {
    size_t n = strlen(w);
    if (p->end - p->pos < n || memcmp(p->s + p->pos, w, n) != 0) return 0;
    p->pos += n;
    return 1;
}

static JVal *parse_number(Parser *p) {
    size_t start = p->pos;
    JVal *v;
    if (p->pos < p->end && p->s[p->pos] == '-') p->pos++;
    if (p->pos >= p->end) goto fail;
    if (p->s[p->pos] == '0') {
        p->pos++;
    } else if (p->s[p->pos] >= '1' && p->s[p->pos] <= '9') {
        while (p->pos < p->end && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
    } else {
        goto fail;
    }
    if (p->pos < p->end && p->s[p->pos] == '.') {
        p->pos++;
        if (p->pos >= p->end || p->s[p->pos] < '0' || p->s[p->pos] > '9') goto fail;
        while (p->pos < p->end && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
    }
    if (p->pos < p->end && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        p->pos++;
        if (p->pos < p->end && (p->s[p->pos] == '+' || p->s[p->pos] == '-')) p->pos++;
        if (p->pos >= p->end || p->s[p->pos] < '0' || p->s[p->pos] > '9') goto fail;
        while (p->pos < p->end && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
    }
    v = jnew(J_NUM);
    v->len = p->pos - start;
    v->str = xrealloc(NULL, v->len + 1);
    memcpy(v->str, p->s + start, v->len);
    v->str[v->len] = '\0';
    return v;
fail:
    p->failed = 1;
    return NULL;
}

static JVal *parse_value(Parser *p) {
    JVal *v;
    char c;
    skip_ws(p);
    if (p->pos >= p->end) {
        p->failed = 1;
        return NULL;
    }
    c = p->s[p->pos];
    if (c == '{' || c == '[') {
        int is_obj = (c == '{');
        char close = is_obj ? '}' : ']';
        if (++p->depth > MAX_DEPTH) {
            p->failed = 1;
            return NULL;
        }
        v = jnew(is_obj ? J_OBJ : J_ARR);
        p->pos++;
        skip_ws(p);
        if (p->pos < p->end && p->s[p->pos] == close) {
            p->pos++;
            p->depth--;
            return v;
        }
        for (;;) {
            char *key = NULL;
            JVal *item;
            skip_ws(p);
            if (is_obj) {
                size_t klen;
                if (p->pos >= p->end || p->s[p->pos] != '"') goto fail;
                key = parse_string_raw(p, &klen);
                if (key == NULL) goto fail;
                skip_ws(p);
                if (p->pos >= p->end || p->s[p->pos] != ':') {
                    free(key);
                    goto fail;
                }
                p->pos++;
            }
            item = parse_value(p);
            if (item == NULL) {
                free(key);
                goto fail;
            }
            push_item(v, key, item);
            skip_ws(p);
            if (p->pos >= p->end) goto fail;
            if (p->s[p->pos] == ',') {
                p->pos++;
                continue;
            }
            if (p->s[p->pos] == close) {
                p->pos++;
                p->depth--;
                return v;
            }
            goto fail;
        }
    fail:
        jfree(v);
        p->failed = 1;
        return NULL;
    }
    if (c == '"') {
        size_t len;
        char *s = parse_string_raw(p, &len);
        if (s == NULL) return NULL;
        v = jnew(J_STR);
        v->str = s;
        v->len = len;
        return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number(p);
    if (match_word(p, "true")) {
        v = jnew(J_BOOL);
        v->boolean = 1;
        return v;
    }
    if (match_word(p, "false")) return jnew(J_BOOL);
    if (match_word(p, "null")) return jnew(J_NULL);
    p->failed = 1;
    return NULL;
}

/* Parse a whole line; NULL if it is not exactly one JSON value. */
static JVal *parse_json(const char *s, size_t len) {
    Parser p = {s, 0, len, 0, 0};
    JVal *v = parse_value(&p);
    if (v == NULL) return NULL;
    skip_ws(&p);
    if (p.pos != p.end) {
        jfree(v);
        return NULL;
    }
    return v;
}

/* Field of an object (the last one if a key repeats), or NULL. */
static const JVal *jget(const JVal *obj, const char *key) {
    size_t i;
    if (obj == NULL || obj->type != J_OBJ) return NULL;
    for (i = obj->n; i > 0; i--) {
        if (strcmp(obj->keys[i - 1], key) == 0) return obj->items[i - 1];
    }
    return NULL;
}

static const char *jstr(const JVal *v) {
    return (v != NULL && v->type == J_STR) ? v->str : NULL;
}

static int jstr_is(const JVal *v, const char *s) {
    const char *t = jstr(v);
    return t != NULL && strcmp(t, s) == 0;
}

/* ------------------------------------------------------------------ output */

static void put_json_string(const char *s) {
    const unsigned char *u = (const unsigned char *)s;
    putchar('"');
    for (; *u; u++) {
        if (*u == '"' || *u == '\\') {
            putchar('\\');
            putchar(*u);
        } else if (*u < 0x20) {
            printf("\\u%04x", (unsigned)*u);
        } else {
            putchar(*u);
        }
    }
    putchar('"');
}

static void send_hello(void) {
    fputs("{\"type\":\"hello\",\"name\":\"c-simple\",\"author\":\"ecarte-arena\","
          "\"version\":\"1.0\",\"protocol\":1}\n",
          stdout);
    fflush(stdout);
}

static void send_action(const char *raw_id, const char *action) {
    printf("{\"type\":\"action\",\"id\":%s,\"action\":", raw_id);
    put_json_string(action);
    fputs("}\n", stdout);
    fflush(stdout);
}

/* ------------------------------------------------------------------ cards */

/* Rank strength, ranks highest first: K Q J A T 9 8 7. -1 if not a rank. */
static int rank_of(char r) {
    static const char order[] = "789TAJQK";
    const char *q = (r != '\0') ? strchr(order, r) : NULL;
    return q ? (int)(q - order) : -1;
}

static int is_card(const char *c) {
    return c != NULL && strlen(c) == 2 && rank_of(c[0]) >= 0 && strchr("SHDC", c[1]) != NULL;
}

/* Sort key: trumps above every plain card, then by rank. */
static int card_key(const char *c, char trump) {
    return (c[1] == trump ? 8 : 0) + rank_of(c[0]);
}

/* Whether `card` beats `lead` (the card led) with `trump` as trumps. */
static int beats(const char *card, const char *lead, char trump) {
    if (card[1] == lead[1]) return rank_of(card[0]) > rank_of(lead[0]);
    return card[1] == trump;
}

/* How much we want to keep a card: trumps > kings > the rest (by rank). */
static int keep_value(const char *c, char trump) {
    if (c[1] == trump) return 100 + rank_of(c[0]);
    if (c[0] == 'K') return 50;
    return rank_of(c[0]);
}

static int count_trumps(const JVal *hand, char trump) {
    size_t i;
    int n = 0;
    if (hand == NULL || hand->type != J_ARR) return 0;
    for (i = 0; i < hand->n; i++) {
        const char *c = jstr(hand->items[i]);
        if (is_card(c) && c[1] == trump) n++;
    }
    return n;
}

/* ------------------------------------------------------------------ decisions */

static const char *find_legal(const JVal *legal, const char *action) {
    size_t i;
    for (i = 0; i < legal->n; i++) {
        if (jstr_is(legal->items[i], action)) return legal->items[i]->str;
    }
    return NULL;
}

/* Score of a discard option "discard C1 C2 ..." (higher is better). */
static long discard_score(const char *action, char trump, int *ok) {
    long score = 0;
    const char *p;
    *ok = 0;
    if (strncmp(action, "discard", 7) != 0) return 0;
    p = action + 7;
    while (*p == ' ') {
        char card[3];
        p++;
        if (p[0] == '\0' || p[1] == '\0' || (p[2] != ' ' && p[2] != '\0')) return 0;
        card[0] = p[0];
        card[1] = p[1];
        card[2] = '\0';
        if (!is_card(card)) return 0;
        {
            int v = keep_value(card, trump);
            score += (v >= 50) ? -(1000 + v) : 10 - v; /* prefer throwing low cards */
        }
        p += 2;
    }
    if (*p != '\0') return 0;
    *ok = 1;
    return score;
}

static const char *choose_discard(const JVal *legal, char trump) {
    const char *best = NULL;
    long best_score = 0;
    size_t i;
    for (i = 0; i < legal->n; i++) {
        const char *a = jstr(legal->items[i]);
        int ok;
        long s;
        if (a == NULL) continue;
        s = discard_score(a, trump, &ok);
        if (ok && (best == NULL || s > best_score)) {
            best = a;
            best_score = s;
        }
    }
    return best;
}

static const char *choose_card(const JVal *view, const JVal *legal, char trump) {
    const JVal *trick = jget(view, "trick");
    const char *lead = NULL;
    const char *best_win = NULL, *lowest = NULL, *highest = NULL;
    size_t i;
    if (trick != NULL && trick->type == J_ARR && trick->n > 0 && is_card(jstr(trick->items[0])))
        lead = trick->items[0]->str;
    for (i = 0; i < legal->n; i++) {
        const char *c = jstr(legal->items[i]);
        int k;
        if (!is_card(c)) continue;
        k = card_key(c, trump);
        if (lowest == NULL || k < card_key(lowest, trump)) lowest = c;
        if (highest == NULL || k > card_key(highest, trump)) highest = c;
        if (lead != NULL && beats(c, lead, trump) &&
            (best_win == NULL || k < card_key(best_win, trump)))
            best_win = c;
    }
    if (lead == NULL) return highest;
    return best_win != NULL ? best_win : lowest;
}

static const char *decide(const JVal *view) {
    const JVal *legal = jget(view, "legal");
    const char *phase = jstr(jget(view, "phase"));
    const char *trump_s = jstr(jget(view, "trump"));
    const char *turnup = jstr(jget(view, "turnup"));
    const char *choice = NULL;
    char trump = '?';
    int trumps;

    if (legal == NULL || legal->type != J_ARR || legal->n == 0) return NULL;
    if (trump_s != NULL && strlen(trump_s) == 1) trump = trump_s[0];
    else if (is_card(turnup)) trump = turnup[1];
    trumps = count_trumps(jget(view, "hand"), trump);
    if (phase == NULL) phase = "";

    if (strcmp(phase, "propose") == 0) {
        choice = find_legal(legal, trumps >= 2 ? "stand" : "propose");
    } else if (strcmp(phase, "answer") == 0) {
        choice = find_legal(legal, trumps >= 2 ? "refuse" : "accept");
    } else if (strcmp(phase, "discard") == 0) {
        choice = choose_discard(legal, trump);
    } else if (strcmp(phase, "mark") == 0) {
        choice = find_legal(legal, "mark");
    } else if (strcmp(phase, "trick") == 0) {
        choice = choose_card(view, legal, trump);
    }
    if (choice == NULL) {
        /* Unknown phase or nothing matched: the first legal action is always legal. */
        size_t i;
        for (i = 0; i < legal->n && choice == NULL; i++) choice = jstr(legal->items[i]);
    }
    return choice;
}

/* ------------------------------------------------------------------ main loop */

/* Read one line of any length (without its '\n'); 0 at end of file. */
static int read_line(char **buf, size_t *cap, size_t *len) {
    int ch;
    size_t n = 0;
    int got = 0;
    while ((ch = getchar()) != EOF) {
        got = 1;
        if (ch == '\n') break;
        if (n + 1 >= *cap) {
            *cap = *cap ? *cap * 2 : 4096;
            *buf = xrealloc(*buf, *cap);
        }
        (*buf)[n++] = (char)ch;
    }
    if (!got) return 0;
    if (*buf == NULL) {
        *cap = 16;
        *buf = xrealloc(NULL, *cap);
    }
    (*buf)[n] = '\0';
    *len = n;
    return 1;
}

int main(void) {
    char *line = NULL;
    size_t cap = 0, len = 0;
    setvbuf(stdout, NULL, _IOLBF, 0); /* belt and braces: we also fflush (§2.4) */

    while (read_line(&line, &cap, &len)) {
        JVal *msg = parse_json(line, len);
        const char *type;
        if (msg == NULL || msg->type != J_OBJ) {
            fprintf(stderr, "ecarte-c: ignoring a line that is not a JSON object\n");
            jfree(msg);
            continue;
        }
        type = jstr(jget(msg, "type"));
        if (type == NULL) {
            /* no type: not a message we know; ignore */
        } else if (strcmp(type, "hello") == 0) {
            send_hello();
        } else if (strcmp(type, "request") == 0) {
            const JVal *id = jget(msg, "id");
            const char *action = decide(jget(msg, "view"));
            if (id == NULL || id->type != J_NUM || action == NULL) {
                fprintf(stderr, "ecarte-c: cannot answer a request (no id or no legal action)\n");
            } else {
                send_action(id->str, action);
            }
        } else if (strcmp(type, "quit") == 0) {
            jfree(msg);
            break;
        } else if (strcmp(type, "forfeit") == 0) {
            const char *reason = jstr(jget(msg, "reason"));
            const char *detail = jstr(jget(msg, "detail"));
            fprintf(stderr, "ecarte-c: forfeit: %s: %s\n", reason ? reason : "?",
                    detail ? detail : "");
            jfree(msg);
            break;
        }
        /* new_game, deal, event, hand, deal_end, game_end and unknown types: nothing
         * to do for a stateless bot. */
        jfree(msg);
    }
    free(line);
    return 0;
}
