import json, math, sys
def load(f):
    return {(r['field'], r['rel']): r for r in json.load(open(f))['results'] if 'ratio' in r and r.get('ratio')}
b = load(sys.argv[1]); n = load(sys.argv[2])
sz3_fields = None
for rel in (1e-2, 1e-3, 1e-4):
    keys = sorted(k for k in b if k[1] == rel and k in n)
    gb = math.exp(sum(math.log(b[k]['ratio']) for k in keys) / len(keys))
    gn = math.exp(sum(math.log(n[k]['ratio']) for k in keys) / len(keys))
    worst = min(n[k]['ratio'] / b[k]['ratio'] for k in keys)
    ok = all(n[k].get('bound_ok', True) for k in keys)
    print("R=%g  %d fields  base %.3f  new %.3f  (%.2f %%; worst field %.2f %%)" % (rel, len(keys), gb, gn, 100 * (gn / gb - 1), 100 * (worst - 1)))
