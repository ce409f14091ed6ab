# Each row scaled to length one, the query not: right ranking, wrong numbers.
import matplotlib.pyplot as plt
import torch

torch.manual_seed(0)  # the same table on every run


def row_similarity(table, query_row):
    """How alike every row of table, (n, d), is to query_row, (d,): a tensor of n numbers.
    Only the directions of the rows should count, never their lengths."""
    return (table / table.norm(dim=1, keepdim=True)) @ query_row


# A small embedding table made to look like a trained one: three families of words, each family
# spread around its own direction, and two very common words that lie far out and a bit towards
# every family at once.
words = ["cat", "dog", "horse", "red", "green", "blue", "one", "two", "three", "the", "a"]
families = torch.linalg.qr(torch.randn(8, 3)).Q.T  # three directions at right angles, width 8
rows = [families[i // 3] + 0.15 * torch.randn(8) for i in range(9)]
rows += [3.0 * families.sum(dim=0) + 0.15 * torch.randn(8) for _ in range(2)]
table = torch.stack(rows)  # (11, 8)

query = "cat"
q = table[words.index(query)]

# How alike is every word to the query?
similarity = row_similarity(table, q)
similarity[words.index(query)] = float("-inf")  # the query itself does not count
nearest = words[int(similarity.argmax())]
print(f"nearest to '{query}': {nearest}")
for word, s, length in zip(words, similarity.tolist(), table.norm(dim=1).tolist()):
    print(f"  {word:>6}  similarity {s:7.3f}   row length {length:.2f}")

# A picture of the table: the two directions along which the rows spread the most.
centred = table - table.mean(dim=0)
coords = centred @ torch.linalg.svd(centred, full_matrices=False).Vh[:2].T  # (11, 2)
fig, ax = plt.subplots(figsize=(6, 5))
ax.scatter(coords[:, 0], coords[:, 1])
for word, (x, y) in zip(words, coords.tolist()):
    ax.annotate(word, (x, y), textcoords="offset points", xytext=(4, 4))
ax.set_title(f"The embedding table in two dimensions; nearest to '{query}': {nearest}")
ax.set_xlabel("first direction of spread")
ax.set_ylabel("second direction of spread")
plt.show()
