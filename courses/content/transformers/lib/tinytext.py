"""A small text to train on: Part 8 trains a TinyGPT on it one character at a time, on TRAIN, the
story without one paragraph, and scores it on VALIDATION, that paragraph.

The story below was written for this course and is free to use, copy and change for any purpose.
It is about 3,000 characters long: small enough that a model of a few tens of thousands of
parameters learns its spelling and much of its wording in a minute on one CPU, and long enough
that the model cannot simply memorise it in a handful of steps. Its words repeat on purpose (the
keeper's evening routine comes back again and again), which gives a small model patterns to find.
"""

TEXT = """\
The old lighthouse stood at the end of the north road, where the land stopped and the sea began.
Its keeper was a woman called Ada. Every evening she climbed the stairs, one hundred and twelve of
them, and every evening she counted them out loud, because the counting kept her company.

At the top she wiped the glass, she trimmed the wick, and she lit the lamp. Then she sat by the
window with a cup of tea and watched the light go round. The light went round and round, and the
ships out at sea saw it and knew where the rocks were.

One evening the wind came from the west and the rain came with it. Ada climbed the stairs and
counted them out loud. At the top she wiped the glass, she trimmed the wick, and she lit the lamp.
The wind pushed at the window and the rain ran down the glass, but the lamp burned and the light
went round.

Far out on the water a small boat was lost. Its sailor was a boy called Tom, who had gone out to
fish and had stayed too long. The waves were high and the sky was dark, and Tom could not tell
the sea from the land. Then he saw the light. It went round and round, and it came back to him
again and again, as if it were looking for him.

Tom turned the boat toward the light and rowed. He rowed until his arms hurt and his hands were
cold. The light kept coming round, and each time it came round it was a little closer. At last
the boat came into the quiet water behind the rocks, and Tom tied it to the old stone steps below
the lighthouse.

Ada heard a knock at the door. She went down the stairs, one hundred and twelve of them, and she
counted them out loud. At the bottom she opened the door and found a wet, cold boy with a rope in
his hand. She took him up the stairs and gave him a cup of tea and a dry coat, and they sat by the
window and watched the light go round.

In the morning the wind had gone and the sea was calm. Tom rowed home along the shore, and his
mother stood on the beach and waved. After that, every evening, Tom looked out to sea and waited
for the light. When it came round he waved to it, and he knew that Ada was at the top of the
stairs with her cup of tea.

The years went by. Ada grew old, and the stairs grew long. One evening Tom came up the north road
and knocked at the door. He climbed the stairs with her, one hundred and twelve of them, and they
counted them out loud together. At the top he wiped the glass, he trimmed the wick, and he lit
the lamp, and Ada sat by the window and watched him.

After that Tom came every evening. He climbed the stairs and counted them out loud. At the top he
wiped the glass, he trimmed the wick, and he lit the lamp. Then he sat by the window with Ada and
a cup of tea, and they watched the light go round.

The light still goes round. If you walk to the end of the north road on a dark night, you will
see it. It goes round and round, and the ships out at sea see it and know where the rocks are.
And somewhere at the top of the stairs, someone has wiped the glass, trimmed the wick and lit
the lamp, and is sitting by the window with a cup of tea.
"""

# A paragraph held out of training, so that a model can be scored on text it never saw: the one
# where the years go by. Every character in it also occurs in the rest of the story, and much of
# its wording (the stairs, the counting, the glass and the wick) comes back there too, while its
# sentences themselves do not. TRAIN is the story without it; TEXT is still the whole story.
_PARAGRAPHS = TEXT.split("\n\n")
_HELD_OUT = 7
VALIDATION = _PARAGRAPHS[_HELD_OUT]
TRAIN = "\n\n".join(_PARAGRAPHS[:_HELD_OUT] + _PARAGRAPHS[_HELD_OUT + 1 :])
