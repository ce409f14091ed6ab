import torch


def check(ns):
    table, words, query, nearest = ns.get("table"), ns.get("words"), ns.get("query"), ns.get("nearest")
    if (
        not isinstance(table, torch.Tensor)
        or table.dim() != 2
        or not isinstance(words, list)
        or len(words) != len(table)
    ):
        return False, "Keep `table` and `words` as the starter code makes them: one row of the table per word."
    if query not in words:
        return False, "`query` should be one of the words in `words`."
    if not isinstance(nearest, str):
        return False, "`nearest` should be a word: the one whose row is most alike the query's."
    table = table.float()
    if torch.isnan(table).any() or (table.norm(dim=1) == 0).any():
        return False, "The table holds NaN or a row of zeros; keep the table as the starter code builds it."
    i = words.index(query)
    directions = torch.nn.functional.normalize(table, dim=1)
    by_angle = directions @ directions[i]
    by_angle[i] = float("-inf")
    by_dot = table @ table[i]
    by_dot[i] = float("-inf")
    expected, dot_winner = words[int(by_angle.argmax())], words[int(by_dot.argmax())]
    if nearest == expected:
        return True, (
            f"'{expected}' points the most nearly the same way as '{query}'. The plain dot product picked "
            f"'{dot_winner}', whose row is long enough to beat any closer but shorter one."
        )
    if nearest == query:
        return False, f"'{query}' is always most alike itself; leave it out of the race, as the starter code does."
    if nearest == dot_winner:
        return False, (
            f"'{nearest}' wins because its row is long, not because it points the same way as '{query}'. "
            "Make every row the same length before you compare them."
        )
    return False, f"'{nearest}' is not the word whose row makes the smallest angle with the row of '{query}'."
