"""Hand-written host-routed plans in the node network contract's form, for
the node role's and the lab's tests (and the molecule scenarios' files
until the Stack-Ring/Stack-Mesh planner writes them).

ring(St, n): St stages of n nodes; stage i's node x has NIC ``east`` on
switch ``ssb<i>`` (10.10.i.(x+1)/24) and ``west`` on ``ssb<i-1 mod St>``
(10.10.(i-1 mod St).(x+129)/24): the paper's IP plan (E 10.10.i.x, W
10.10.(i-1).x) with the West addresses moved up by 128 so that the two
stages sharing a switch do not take the same address. Every other stage
network goes out of the side with fewer stages to cross, through node x of
the neighbouring stage (gateway balancing).

mesh(k): a k x k wrap-around grid of single-node groups; node (i, j) has
``west`` on ``x<i>_<j>``, ``east`` on ``x<i+1>_<j>``, ``south`` on
``y<i>_<j>`` and ``north`` on ``y<i>_<j+1>``; each switch is a /24;
routes go X first, then Y, towards the nearer group touching the subnet.
"""


def ring(stages, per_stage):
    nodes, switches = {}, {"ssb%d" % i: {"ports": 48, "attached": []} for i in range(stages)}
    for i in range(stages):
        for x in range(per_stage):
            name = "s%dn%d" % (i, x)
            west = (i - 1) % stages
            nodes[name] = {
                "interfaces": [
                    {"name": "east", "switch": "ssb%d" % i, "address": "10.10.%d.%d/24" % (i, x + 1)},
                    {"name": "west", "switch": "ssb%d" % west, "address": "10.10.%d.%d/24" % (west, x + 129)},
                ],
                "routes": [], "forwarding": True, "rp_filter": 0, "sysctls": {}}
            switches["ssb%d" % i]["attached"].append([name, "east"])
            switches["ssb%d" % west]["attached"].append([name, "west"])
            for j in range(stages):
                if j in (i, west):
                    continue
                east_hops = (j - i) % stages
                west_hops = (i - (j + 1)) % stages
                if east_hops <= west_hops:
                    route = {"to": "10.10.%d.0/24" % j, "via": "10.10.%d.%d" % (i, x + 129), "dev": "east"}
                else:
                    route = {"to": "10.10.%d.0/24" % j, "via": "10.10.%d.%d" % (west, x + 1), "dev": "west"}
                nodes[name]["routes"].append(route)
    return {"nodes": nodes, "switches": switches}


def _mesh_subnet(axis, i, j):
    return "10.%d.%d.0/24" % (64 + axis, i * 16 + j)


def mesh(k):
    nodes, switches = {}, {}
    sides = (("west", 0, 0, 0, 129), ("east", 0, 1, 0, 1), ("south", 1, 0, 0, 129), ("north", 1, 0, 1, 1))
    for i in range(k):
        for j in range(k):
            name = "g%d_%d" % (i, j)
            nodes[name] = {"interfaces": [], "routes": [], "forwarding": True, "rp_filter": 0, "sysctls": {}}
            for nic, axis, di, dj, host in sides:
                a, b = (i + di) % k, (j + dj) % k
                switch = "%s%d_%d" % ("xy"[axis], a, b)
                switches.setdefault(switch, {"ports": 48, "attached": []})["attached"].append([name, nic])
                nodes[name]["interfaces"].append({"name": nic, "switch": switch,
                                                  "address": _mesh_subnet(axis, a, b).replace(".0/24", ".%d/24" % host)})

    def address(node, nic):
        return next(item["address"].split("/")[0] for item in nodes[node]["interfaces"] if item["name"] == nic)

    def step(i, j, ti, tj):
        """The NIC and the neighbouring group towards (ti, tj), X first."""
        if i != ti:
            if (ti - i) % k <= (i - ti) % k:
                return "east", ((i + 1) % k, j), "west"
            return "west", ((i - 1) % k, j), "east"
        if (tj - j) % k <= (j - tj) % k:
            return "north", (i, (j + 1) % k), "south"
        return "south", (i, (j - 1) % k), "north"

    def dist(i, j, ti, tj):
        return min((ti - i) % k, (i - ti) % k) + min((tj - j) % k, (j - tj) % k)

    for i in range(k):
        for j in range(k):
            name = "g%d_%d" % (i, j)
            own = {item["switch"] for item in nodes[name]["interfaces"]}
            for switch in sorted(switches):
                if switch in own:
                    continue
                a, b = (int(v) for v in switch[1:].split("_"))
                touching = [(a, b), ((a - 1) % k, b)] if switch[0] == "x" else [(a, b), (a, (b - 1) % k)]
                target = min(touching, key=lambda g: (dist(i, j, g[0], g[1]), g))
                nic, (ni, nj), their = step(i, j, target[0], target[1])
                nodes[name]["routes"].append({"to": _mesh_subnet("xy".index(switch[0]), a, b),
                                              "via": address("g%d_%d" % (ni, nj), their), "dev": nic})
    return {"nodes": nodes, "switches": switches}
