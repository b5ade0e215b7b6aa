SELECT 'O' || 'K';
