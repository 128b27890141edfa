"""Everyday talk that asks for no action: the other side of the command classifier (intent.py).

Greetings, questions about the companion, feelings, news, thanks, praise and goodbyes, in
English and Japanese, the two languages the shipped companions speak. A sentence is taken
for a command only when it is clearly closer to ways of asking for an action than to all of
these. Written for this project as generic examples of talk, not drawn from any test set.
"""

from __future__ import annotations

TALK: tuple[str, ...] = (
    # greetings and goodbyes
    "Hello!", "Hi there, how are you doing?", "Good morning.", "I'm home.", "Good night, sleep well.",
    "See you tomorrow.", "I have to go now, bye.",
    # about the companion
    "What's your name?", "How old are you?", "Where do you live?", "Who made you?", "What do you like?",
    "What is your favourite food?", "Are you a robot?", "What can you do?", "Do you have any friends?",
    "What did you do today?", "Do you like music?",
    # feelings and news
    "I'm so tired today.", "I feel a bit sad.", "Work was really stressful.", "I got a new job!",
    "I passed my exam.", "It's really cold outside.", "It's raining again.", "I'm bored.",
    "I can't sleep.", "My friend is visiting this weekend.", "I'm hungry.",
    # thanks and praise
    "Thank you so much.", "You're so cute.", "Good job, well done.", "You're the best.", "I love you.",
    # questions and opinions
    "What should I eat for dinner?", "Can you help me with my homework?", "What time is it?",
    "Tell me a joke.", "What do you think about that?",
    # numbers that count nothing the companion should do
    "I have 2 cats and a dog.", "My room is number 12.", "It's 5 o'clock already.", "I read 3 books this month.",
    # Japanese
    "こんにちは", "おはよう", "ただいま", "おやすみなさい", "またね、バイバイ",
    "お名前は？", "何歳なの？", "どこに住んでるの？", "誰が作ったの？", "好きなものは何？", "趣味は何？",
    "今日は何をしていたの？", "ロボットなの？",
    "今日はすごく疲れた", "ちょっと悲しいんだ", "仕事が大変だった", "テストに合格したよ", "外は寒いね",
    "また雨が降ってる", "暇だなあ", "眠れないんだ", "お腹すいた",
    "ありがとう", "かわいいね", "よくできました", "大好きだよ",
    "猫を2匹飼ってるよ", "今日は3時に起きた",
    "夕ご飯は何にしよう？", "宿題を手伝ってくれる？", "何か面白い話をして", "どう思う？",
)
